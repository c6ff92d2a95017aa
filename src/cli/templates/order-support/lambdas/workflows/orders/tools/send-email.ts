// The email trigger's reply tool: it only ever writes to the verified sender, once per email.
export { sendEmail as default } from 'stepwise';
