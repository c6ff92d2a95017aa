// {{> hand-off.ts}}
