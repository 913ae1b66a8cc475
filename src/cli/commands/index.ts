import type { Command } from '../command.ts';
import { apply } from './apply.ts';
import { deadLettersDiscard, deadLettersList, deadLettersReplay } from './dead-letters.ts';
import {
  pollersDelete,
  pollersGet,
  pollersList,
  pollersNudge,
  pollersPause,
  pollersResume,
  pollersRun,
} from './pollers.ts';
import { preview } from './preview.ts';
import { secretsSet } from './secrets.ts';

/** Every command, by the words that name it: a new command is one entry here. */
export const COMMANDS = {
  'pollers list': pollersList,
  'pollers get': pollersGet,
  'pollers delete': pollersDelete,
  'pollers nudge': pollersNudge,
  'pollers run': pollersRun,
  'pollers pause': pollersPause,
  'pollers resume': pollersResume,
  'secrets set': secretsSet,
  'dead-letters list': deadLettersList,
  'dead-letters replay': deadLettersReplay,
  'dead-letters discard': deadLettersDiscard,
  apply,
  preview,
} as const satisfies Record<string, Command>;

export type CommandName = keyof typeof COMMANDS;
