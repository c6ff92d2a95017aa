// The email trigger's reply tool: pinned to the verified sender, one reply per email.
export { sendEmail as default } from 'stepwise';
