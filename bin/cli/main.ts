import { Command } from 'commander';

const program = new Command('stepwise').description('Step workflows on AWS Step Functions, runnable locally.');
program.parse();
