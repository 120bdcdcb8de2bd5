// Whether a brain's Transfer can be carried out at all, before any carrier is asked: the reasons
// come back to the brain as TransferFailed's detail, so they say what to do instead.

/** A tel: or sip:/sips: URI, or an E.164 number (ITU-T E.164: "+", up to 15 digits). */
const TARGET = /^(?:(?:tel|sips?):[^\s<>"]+|\+[1-9][0-9]{1,14})$/i;

/** Why the Transfer is refused, or undefined when it may go to the phone line. */
export function transferRefusal(
  target: string,
  isPhoneCall: boolean,
  alreadyUnderWay: boolean,
): string | undefined {
  if (!isPhoneCall) {
    return "This session is a web call: only a phone call can be transferred.";
  }
  if (!TARGET.test(target)) {
    return `The transfer target must be a tel: or sip: URI or an E.164 number ("+" and digits); got "${
      target.slice(0, 80)
    }".`;
  }
  if (alreadyUnderWay) return "A transfer of this call is already under way.";
  return undefined;
}
