import { createProgram } from '/work/wt-docs/bin/cli/program.ts';
const p = await createProgram();
const c = p.commands.find((x) => x.name() === 'demo')!;
let help = '';
c.configureOutput({ writeOut: (t) => (help += t) });
c.outputHelp();
console.log(JSON.stringify(help.slice(-300)));
