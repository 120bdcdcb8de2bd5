// Turns the end-of-turn rules were not tuned on: the same kinds as phrases.ts, other sentences.
// `--turns held-out`: written after round 3's rules were chosen. Its phone numbers read after
// "call me on" and "कॉल करो" then showed gaps the lexicons fixed (phone words, zero as a digit),
// so since then it is half tuned. `--turns held-out-2`: written before that fix and before any
// run on it, and never changed to suit the rules: the honest figure (docs/turn-taking.md).
// English, Hindi and Bengali.
import type { TurnKind, TurnScript } from "./phrases.ts";

const t = (kind: TurnKind, ...phrases: string[]): TurnScript => ({ kind, phrases });

export const HELD_OUT: Readonly<Record<string, TurnScript[]>> = {
  en: [
    t("complete", "can you send me the invoice again"),
    t("complete", "no I already paid last week"),
    t("hesitation", "I want to uh", "cancel my subscription"),
    t("hesitation", "the problem is er", "the app keeps crashing"),
    t("connective", "I called yesterday but", "nobody picked up"),
    t("connective", "I want to pay my bill so", "please send me the link"),
    t("list", "I need a charger", "a case", "and a screen guard"),
    t("list", "Monday", "Wednesday", "and Friday work for me"),
    t("numbers", "my mobile number is four four seven", "one nine two", "eight eight zero six"),
    t("numbers", "call me on nine one two", "three four five", "six seven eight nine"),
    t("pause", "could you tell me if the", "store is open on Sunday"),
    t("pause", "I think I will need to", "reschedule my appointment"),
  ],
  hi: [
    t("complete", "मेरा ऑर्डर कहाँ है"),
    t("complete", "नहीं मुझे नहीं चाहिए"),
    t("hesitation", "मेरी बुकिंग उम", "कल के लिए है"),
    t("hesitation", "मुझे वो मतलब", "रिफंड चाहिए"),
    t("connective", "मैंने पैसे भेजे लेकिन", "अभी तक नहीं पहुँचे"),
    t("connective", "मुझे टिकट चाहिए क्योंकि", "कल मेरी मीटिंग है"),
    t("list", "मुझे चावल", "दाल", "और चीनी चाहिए"),
    t("list", "सोमवार", "बुधवार", "और शुक्रवार ठीक है"),
    t("numbers", "मेरा मोबाइल नंबर नौ नौ एक", "दो तीन चार", "पाँच छह सात आठ"),
    t("numbers", "इस पर कॉल करो आठ सात छह", "पाँच चार तीन", "दो एक शून्य नौ"),
    t("pause", "मैं अगले हफ़्ते", "दिल्ली जा रहा हूँ"),
    t("pause", "क्या आप मुझे", "कल फ़ोन कर सकते हैं"),
  ],
  bn: [
    t("complete", "আমার অর্ডার কোথায়"),
    t("complete", "না আমার লাগবে না"),
    t("hesitation", "আমার বুকিং মানে", "কালকের জন্য"),
    t("connective", "আমি টাকা পাঠিয়েছি কিন্তু", "এখনও পৌঁছায়নি"),
    t("list", "আমার চাল", "ডাল", "আর চিনি চাই"),
    t("numbers", "আমার মোবাইল নম্বর নয় নয় এক", "দুই তিন চার", "পাঁচ ছয় সাত আট"),
    t("pause", "আমি পরের সপ্তাহে", "দিল্লি যাচ্ছি"),
  ],
};

/** The second held-out set (`--turns held-out-2`): see the head of this file. */
export const HELD_OUT_2: Readonly<Record<string, TurnScript[]>> = {
  en: [
    t("complete", "I would like to speak to a manager"),
    t("complete", "that is all thank you"),
    t("hesitation", "my account is um", "locked since Monday"),
    t("hesitation", "I was hoping to er", "change my delivery address"),
    t("connective", "the parcel arrived but", "the box was damaged"),
    t("connective", "I moved last month and", "I need to update my address"),
    t("list", "I ordered a shirt", "two pairs of socks", "and a belt"),
    t("list", "I can do Tuesday", "Thursday", "or Saturday morning"),
    t(
      "numbers",
      "the best number to reach me is nine eight seven",
      "six five four",
      "three two one zero",
    ),
    t("numbers", "my account number is five five two", "eight one nine", "four four"),
    t("pause", "is it possible to", "get a refund for this"),
    t("pause", "I have been waiting for", "almost two weeks now"),
  ],
  hi: [
    t("complete", "मेरा पैसा वापस कब आएगा"),
    t("complete", "हाँ यही सही है"),
    t("hesitation", "मेरा खाता उम", "बंद हो गया है"),
    t("hesitation", "मुझे वो", "नया कार्ड चाहिए"),
    t("connective", "पार्सल आया लेकिन", "डिब्बा टूटा हुआ था"),
    t("connective", "मैं घर बदल रहा हूँ इसलिए", "पता बदलना है"),
    t("list", "मुझे दूध", "ब्रेड", "और अंडे चाहिए"),
    t("list", "मंगलवार", "गुरुवार", "या शनिवार चलेगा"),
    t("numbers", "इस नंबर पर मैसेज करो नौ आठ सात", "छह पाँच चार", "तीन दो एक शून्य"),
    t("numbers", "मेरा खाता नंबर पाँच पाँच दो", "आठ एक नौ", "चार चार"),
    t("pause", "क्या मुझे", "रिफंड मिल सकता है"),
    t("pause", "मैं दो हफ़्ते से", "इंतज़ार कर रहा हूँ"),
  ],
  bn: [
    t("complete", "আমার টাকা কবে ফেরত আসবে"),
    t("complete", "হ্যাঁ এটাই ঠিক"),
    t("hesitation", "আমার অ্যাকাউন্ট মানে", "বন্ধ হয়ে গেছে"),
    t("connective", "পার্সেল এসেছে কিন্তু", "বাক্সটা ভাঙা ছিল"),
    t("list", "আমার দুধ", "পাউরুটি", "আর ডিম চাই"),
    t("numbers", "এই নম্বরে মেসেজ করুন নয় আট সাত", "ছয় পাঁচ চার", "তিন দুই এক শূন্য"),
    t("pause", "আমি দুই সপ্তাহ ধরে", "অপেক্ষা করছি"),
  ],
};
