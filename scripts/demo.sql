-- Tables and rows of the demo backends (resources/shop, resources/staff, resources/desk).
-- Run after `xmlrest db init`; safe to run again.
create table if not exists products (
  product_id int unsigned not null auto_increment primary key,
  name varchar(100) not null,
  price decimal(10, 2) not null,
  stock int not null,
  constraint products_stock_not_negative check (stock >= 0)
) engine = InnoDB default charset = utf8mb4;

create table if not exists orders (
  order_id int unsigned not null auto_increment primary key,
  user_id int unsigned not null,
  product_id int unsigned not null,
  quantity int not null,
  created_on timestamp not null default current_timestamp,
  constraint orders_quantity_positive check (quantity > 0),
  constraint orders_user foreign key (user_id) references usr (user_id),
  constraint orders_product foreign key (product_id) references products (product_id)
) engine = InnoDB default charset = utf8mb4;

create table if not exists notes (
  note_id int unsigned not null auto_increment primary key,
  user_id int unsigned not null,
  title varchar(100) not null,
  body text not null,
  created_on timestamp not null default current_timestamp,
  unique key notes_user_title (user_id, title),
  constraint notes_user foreign key (user_id) references usr (user_id)
) engine = InnoDB default charset = utf8mb4;

create table if not exists reviews (
  review_id int unsigned not null auto_increment primary key,
  user_id int unsigned not null,
  product_id int unsigned not null,
  stars tinyint unsigned not null,
  body varchar(2000) not null,
  created_on timestamp not null default current_timestamp,
  constraint reviews_stars check (stars between 1 and 5),
  constraint reviews_user foreign key (user_id) references usr (user_id) on delete cascade,
  constraint reviews_product foreign key (product_id) references products (product_id)
) engine = InnoDB default charset = utf8mb4;

create table if not exists notices (
  notice_id int unsigned not null auto_increment primary key,
  title varchar(200) not null,
  posted_on timestamp not null default current_timestamp
) engine = InnoDB default charset = utf8mb4;

-- The orders the paged catalog (resources/shop/products@3.0.xml) may be sorted in, each served by an index:
-- a page deep in a large catalog then reads its own rows only (xmlrest doctor says when one is missing).
create index if not exists products_name on products (name, product_id);
create index if not exists products_price on products (price, product_id);
-- A customer's orders newest first (resources/shop/orders@2.0.xml), and by quantity.
create index if not exists orders_user_created on orders (user_id, created_on, order_id);
create index if not exists orders_user_quantity on orders (user_id, quantity, created_on desc, order_id desc);

insert ignore into products (product_id, name, price, stock) values
  (1, 'Teapot', 24.50, 10),
  (2, 'Cup', 6.00, 100),
  (3, 'Kettle', 39.90, 5);

-- The demo users and their roles are added by scripts/schema.ts, with argon2id password hashes.

-- The desk backend's tickets (resources/desk): a customer's own, opened by POST, which emits ticket.opened.
create table if not exists tickets (
  ticket_id int unsigned not null auto_increment primary key,
  user_id int unsigned not null,
  subject varchar(200) not null,
  body text not null,
  state varchar(20) not null default 'open',
  created_on timestamp not null default current_timestamp,
  key tickets_user (user_id, ticket_id),
  constraint tickets_user foreign key (user_id) references usr (user_id) on delete cascade
) engine = InnoDB default charset = utf8mb4;
