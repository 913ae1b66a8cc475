import { failure, isObject, segment } from '../api.ts';
import { defineCommand } from '../command.ts';
import { CliError, UsageError } from '../errors.ts';
import { EXIT } from '../exit-codes.ts';

export const secretsSet = defineCommand({
  usage: 'secrets set POLLER NAME < value',
  summary: "set one of a poller's own secrets, read from stdin (PUT /pollers/POLLER/secrets/NAME)",
  help: [
    'The value is read from stdin, never from an argument: an argument stays in the shell',
    "history and in every process listing. One trailing newline (echo's, a heredoc's) is",
    'removed; use printf %s for a value that must end with one. It is sent as JSON',
    '{ "value": … } and never printed: the answer says only the name, when it was set,',
    'whether it replaced one, and the origins it may be sent to: those its config sends it to',
    'now (so set it after the config that names it).',
    '',
    '  printf %s "$ZENDESK_TOKEN" | npx tidemark secrets set acme-tickets ZENDESK_TOKEN',
  ],
  positionals: ['poller', 'name'],
  flags: {},
  async run(context, { args }) {
    const piped = await context.io.readStdin();
    if (piped === null) {
      throw new UsageError(
        `secrets set reads the value from stdin, and none is piped in: printf %s "$VALUE" | npx tidemark secrets set ${args.poller} ${args.name}`,
      );
    }
    const value = piped.replace(/\r?\n$/, '');
    if (value === '') throw new CliError('the value read from stdin is empty: nothing was set');
    const path = `/pollers/${segment(args.poller)}/secrets/${segment(args.name)}`;
    const reply = await context.api().call('PUT', path, { value });
    if (reply.status !== 200 && reply.status !== 201) throw failure('PUT', path, reply);
    const body = isObject(reply.body) ? reply.body : {};
    const verb = body.replaced === true ? 'replaced' : 'set';
    context.out(
      `${verb} ${args.poller}/${args.name} at ${String(body.set_at)}${bound(body.origins)}`,
    );
    return EXIT.ok;
  },
});

/** Where the secret may go, as the answer says (R18); nothing from a Worker that does not say. */
function bound(origins: unknown): string {
  if (!Array.isArray(origins)) return '';
  if (origins.length === 0) return ', for no origin: its config does not send it anywhere yet';
  return `, for ${origins.map(String).join(', ')}`;
}
