import { describe, expect, it } from 'vitest';
import {
  credentialForms,
  credentialsIn,
  isCredentialName,
} from '../../src/config/credential-forms.ts';

describe('the forms a credential may be echoed in', () => {
  it('a Basic header: the value, its base64 with and without padding, user:password and the password, not the user', () => {
    const header = `Basic ${btoa('svc:pa%3Ass')}`;
    const forms = credentialForms(header);
    expect(forms).toEqual(
      expect.arrayContaining([
        header,
        btoa('svc:pa%3Ass'),
        btoa('svc:pa%3Ass').replace(/=+$/, ''),
        'svc:pa%3Ass',
        'pa%3Ass',
        'svc:pa:ss',
        'pa:ss',
      ]),
    );
    expect(forms).not.toContain('svc');
  });

  it('a Bearer header: the value and the token; a bare value: itself', () => {
    expect(credentialForms('Bearer tok-123')).toEqual(['Bearer tok-123', 'tok-123']);
    expect(credentialForms('k-123')).toEqual(['k-123']);
  });

  it('names that hold a credential, and those that only say where one goes', () => {
    for (const name of [
      'Authorization',
      'X-Api-Key',
      'api_key',
      'apiKey',
      'client_secret',
      'refresh_token',
      'password',
      'Cookie',
    ]) {
      expect(isCredentialName(name), name).toBe(true);
    }
    for (const name of [
      'token_url',
      'url',
      'from_param',
      'username',
      'client_id',
      'accept',
      'per_page',
    ]) {
      expect(isCredentialName(name), name).toBe(false);
    }
  });

  it('finds every credential of a config wherever it sits, and leaves its URLs', () => {
    const found = credentialsIn({
      source: {
        url: 'https://api.example.com/x',
        headers: { 'X-Api-Key': 'k-123', accept: 'application/json' },
        params: { access_token: 'a-456', per_page: '100' },
        auth: { type: 'oauth2', token_url: 'https://login.example.com/t', client_secret: 's-789' },
      },
    });
    expect(found.sort()).toEqual(['a-456', 'k-123', 's-789']);
  });
});
