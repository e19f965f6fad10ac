// A real OpenID provider for opsboard's SSO tests: the certified `oidc-provider`, its
// development login form (any login, any password), one confidential client, PKCE required.
// Accounts and their groups are read from OP_ACCOUNTS (a JSON file) at every login, so a
// test changes someone's groups by rewriting the file.
//   OP_PORT OP_ISSUER OP_ACCOUNTS OP_CLIENT_ID OP_CLIENT_SECRET OP_REDIRECT_URI
//   OP_POST_LOGOUT_REDIRECT_URI (where its logout page sends the browser back)
import { readFileSync } from 'node:fs';
import Provider from 'oidc-provider';

const env = (name) => {
  if (!process.env[name]) throw new Error(`${name} is not set`);
  return process.env[name];
};

const accounts = () => JSON.parse(readFileSync(env('OP_ACCOUNTS'), 'utf8'));

const provider = new Provider(env('OP_ISSUER'), {
  clients: [{
    client_id: env('OP_CLIENT_ID'),
    client_secret: env('OP_CLIENT_SECRET'),
    redirect_uris: [env('OP_REDIRECT_URI')],
    post_logout_redirect_uris: [env('OP_POST_LOGOUT_REDIRECT_URI')],
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_post',
  }],
  pkce: { required: () => true },
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['name', 'preferred_username'],
    groups: ['groups'],
  },
  async findAccount(ctx, id) {
    return {
      accountId: id,
      async claims() {
        const account = accounts()[id] || {};
        return {
          sub: id,
          preferred_username: id,
          name: id,
          email: account.email || `${id}@example.com`,
          email_verified: true,
          groups: account.groups || [],
        };
      },
    };
  },
  // A first-party client: no consent screen.
  async loadExistingGrant(ctx) {
    const grantId = ctx.oidc.result?.consent?.grantId
      || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
    if (grantId) return ctx.oidc.provider.Grant.find(grantId);
    const grant = new ctx.oidc.provider.Grant({
      clientId: ctx.oidc.client.clientId,
      accountId: ctx.oidc.session.accountId,
    });
    grant.addOIDCScope('openid email profile groups');
    await grant.save();
    return grant;
  },
  cookies: { keys: ['opsboard-test-only'] },
  features: { devInteractions: { enabled: true } },
});

const server = provider.listen(Number(env('OP_PORT')), '127.0.0.1', () => {
  console.log(`oidc-provider listening on 127.0.0.1:${server.address().port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
