// The email trigger's question tool: pinned to the verified sender, in their thread, once per step;
// the answer comes back as a `stepwise.email` "Email Reply" event (steps 10 and 12 wait for it).
export { askCustomer as default } from 'stepwise';
