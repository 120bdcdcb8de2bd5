// The console's only script: copy buttons, confirmations before revoking, filters that apply on
// change. Every page works without it. Served from /console/assets/console.js (CSP script-src
// 'self', so no inline script anywhere).
export const CONSOLE_JS = `"use strict";
document.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-copy]");
  if (!button) return;
  const el = document.getElementById(button.dataset.copy);
  if (!el) return;
  const done = () => { button.textContent = "Copied"; };
  const select = () => {
    const range = document.createRange();
    range.selectNodeContents(el);
    const sel = getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    try { if (document.execCommand("copy")) return done(); } catch (_) { /* fall through */ }
    button.textContent = "Press Ctrl+C";
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(el.textContent).then(done, select);
  } else select();
});
document.addEventListener("submit", (event) => {
  const message = event.target.dataset.confirm;
  if (message && !confirm(message)) event.preventDefault();
});
document.addEventListener("change", (event) => {
  const form = event.target.closest("form[data-autosubmit]");
  if (form) form.requestSubmit();
});
`;
