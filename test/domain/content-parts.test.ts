import { describe, expect, it } from 'vitest';
import { differingParts } from '../../lambdas/domain/content-parts.ts';
import type { Intent } from '../../lambdas/domain/intent.ts';
import { newIntent } from '../helpers/factories.ts';

/** The same notice (event id) requested with other content. */
function pair(changes: Parameters<typeof newIntent>[0], base: Parameters<typeof newIntent>[0] = {}) {
  const eventId = `evt_parts_${Math.random().toString(36).slice(2)}`;
  return [newIntent({ eventId, ...base }), newIntent({ eventId, ...base, ...changes })] as const;
}

const paths = (recorded: Intent, requested: Intent) =>
  differingParts(recorded, requested).map((p) => `${p.certainty}:${p.path}`);

describe('differingParts', () => {
  it('is empty for the same content', () => {
    const [a, b] = pair({});
    expect(differingParts(a, b)).toEqual([]);
  });

  it('names each part that differs by its request path', () => {
    expect(paths(...pair({ templateVersion: 'v4' }))).toEqual(['differs:template.version']);
    expect(paths(...pair({ destination: 'other@example.com' }))).toEqual(['differs:recipient.email']);
    expect(paths(...pair({ channel: 'sms', destination: '+15557654321' }, { channel: 'sms' }))).toEqual([
      'differs:recipient.phone',
    ]);
    expect(
      paths(
        ...pair(
          { variables: { firstName: 'Bob', portalUrl: 'https://p.example/r' } },
          { variables: { firstName: 'Ada', portalUrl: 'https://p.example/r' } },
        ),
      ),
    ).toEqual(['differs:variables.firstName']);
    expect(paths(...pair({ variables: { firstName: 'Ada', portalUrl: 'https://p.example/r' } }))).toEqual([
      'differs:variables.portalUrl',
    ]);
    expect(paths(...pair({ templateVersion: 'v4', variables: { firstName: 'Bob' } }))).toEqual([
      'differs:template.version',
      'differs:variables.firstName',
    ]);
  });

  it('answers a row from before per-variable digests sensibly', () => {
    const [recorded, requested] = pair({ variables: { firstName: 'Bob' } });
    const { variableDigests: _dropped, ...old } = recorded;
    expect(paths(old, requested)).toEqual(['differs:variables']);
    const [recordedV3, requestedV4] = pair({ templateVersion: 'v4', variables: { firstName: 'Bob' } });
    const { variableDigests: _gone, ...oldV3 } = recordedV3;
    expect(paths(oldV3, requestedV4)).toEqual(['differs:template.version', 'may_differ:variables']);
  });
});
