// Platformatic DB's authorization (fastify-user) treats a request whose token does not verify as
// anonymous. Here a request that sends an Authorization header is answered 401 unless the header
// is a Bearer token that verifies (HS256, JWT_SECRET, iss "api", not expired): the same verifier
// runs again later when the authorization layer builds request.user (a hit in its cache of verified
// tokens, "cache": true in platformatic.json, as xmlrest remembers verified tokens too).
export default async function rejectInvalidTokens(app) {
  app.addHook('onRequest', async (request, reply) => {
    if (request.headers.authorization === undefined) return;
    try {
      await request.jwtVerify();
    } catch (error) {
      return reply
        .code(401)
        .header('www-authenticate', 'Bearer error="invalid_token"')
        .send({ statusCode: 401, code: error.code ?? 'FST_JWT_AUTHORIZATION_TOKEN_INVALID', error: 'Unauthorized', message: error.message });
    }
  });
}
