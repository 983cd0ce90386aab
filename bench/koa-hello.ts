/** CEILING, NOT GENERATED: Koa and @koa/router answering without a database: the framework's own cost. */
import Router from '@koa/router';
import Koa from 'koa';

const app = new Koa();
const router = new Router();
router.get('/api/v1.0/catalog', (ctx) => {
  ctx.body = { catalog: [{ item_id: 1, title: 'hello', price: '1.00' }] };
});
app.use(router.routes());
app.listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('ready\n'));
