/**
 * Every `driveway` subcommand, in the order `driveway --help` lists them. A new command is one
 * file in this folder exporting a `register` function, plus one line here.
 */
import type { Command } from 'commander';
import type { CommandContext } from './context.js';
import { registerServe } from './serve.js';
import { registerMigrate } from './migrate.js';
import { registerUser } from './user.js';
import { registerCheck } from './check.js';
import { registerBackup, registerRestore } from './backup.js';
import { registerPrune } from './prune.js';

export type RegisterCommand = (program: Command, context: CommandContext) => void;

export const COMMANDS: readonly RegisterCommand[] = [
  registerServe,
  registerMigrate,
  registerUser,
  registerCheck,
  registerBackup,
  registerRestore,
  registerPrune,
];
