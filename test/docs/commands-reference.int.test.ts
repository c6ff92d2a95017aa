/**
 * Every shell command of the reference, examples and internals pages that runs offline, run (the CLI reference's are
 * each command's help examples).
 */
import { runDocCommands } from './run-commands.ts';

runDocCommands('the reference, examples and internals pages', (file) =>
  /^docs\/(reference|examples|internals)\//.test(file),
);
