import type { UnitOfWork } from '../database/unit-of-work.js';
import { REMEMBERED_USER_AGENTS, UserAgentRepository } from './user-agent.repository.js';

describe(UserAgentRepository.name, () => {
  const sut = () => new UserAgentRepository({} as UnitOfWork);

  it('should give back a remembered id, and nothing for a text it was not told of or none', () => {
    const repository = sut();

    repository.rememberOnPostgres('curl/8', 7);
    repository.rememberOnPostgres(null, 8);
    repository.rememberOnPostgres('wget/1', null);

    expect(repository.rememberedIdOnPostgres('curl/8')).toBe(7);
    expect(repository.rememberedIdOnPostgres('wget/1')).toBeNull();
    expect(repository.rememberedIdOnPostgres(null)).toBeNull();
  });

  it('should keep at most its bound of texts, forgetting the oldest first', () => {
    const repository = sut();

    for (let i = 0; i <= REMEMBERED_USER_AGENTS; i++) {
      repository.rememberOnPostgres(`agent-${i}`, i + 1);
    }

    expect(repository.rememberedIdOnPostgres('agent-0')).toBeNull();
    expect(repository.rememberedIdOnPostgres('agent-1')).toBe(2);
    expect(repository.rememberedIdOnPostgres(`agent-${REMEMBERED_USER_AGENTS}`)).toBe(
      REMEMBERED_USER_AGENTS + 1,
    );
  });

  it('should look a text up in SQL only when no id is given, and never for none', () => {
    expect(sut().postgresRememberedIdSql('$1', '$2')).toBe(
      'CASE WHEN $1::integer IS NOT NULL THEN $1::integer ' +
        'WHEN $2::varchar IS NOT NULL THEN keygate_user_agent_id($2::varchar) END',
    );
  });
});
