/**
 * Every shell command of the README and the guides that runs offline, run (the reference and examples pages:
 * commands-reference.int.test.ts).
 */
import { runDocCommands } from './run-commands.ts';

runDocCommands(
  'the README, Getting started, the concepts and the guides',
  (file) => !/^docs\/(reference|examples|internals)\//.test(file),
);
