// The email trigger's question tool: to the verified sender, in their thread, once per step; the
// answer comes back as a `stepwise.email` "Email Reply" event (09-await-reply waits for it).
export { askCustomer as default } from 'stepwise';
