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
  -- Moved on by every change of the order (resources/shop/orders.xml, PUT): what If-Match compares.
  version bigint unsigned not null default 0,
  constraint orders_quantity_positive check (quantity > 0),
  constraint orders_user foreign key (user_id) references usr (user_id),
  constraint orders_product foreign key (product_id) references products (product_id)
) engine = InnoDB default charset = utf8mb4;

-- Each change of an order's quantity (resources/shop/orders.xml, PUT), written in the change's transaction: a
-- change refused by its If-Match (412) leaves none.
create table if not exists order_changes (
  change_id int unsigned not null auto_increment primary key,
  order_id int unsigned not null,
  user_id int unsigned not null,
  quantity int not null,
  changed_on timestamp not null default current_timestamp,
  key order_changes_order (order_id)
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

-- The crm backend (resources/crm): organisations sharing one database, each row naming its organisation in
-- org_id, and each user's organisation in usr.org_id (the backend's <Tenant user_column>). A user with none
-- (the other backends' users) is refused by crm's routes (403, reason no_tenant).
alter table usr add column if not exists org_id int unsigned null;

create table if not exists crm_org (
  org_id int unsigned not null primary key,
  name varchar(100) not null
) engine = InnoDB default charset = utf8mb4;

create table if not exists crm_contact (
  contact_id int unsigned not null auto_increment primary key,
  org_id int unsigned not null,
  name varchar(100) not null,
  email varchar(200) not null,
  created_on timestamp not null default current_timestamp,
  unique key crm_contact_email (org_id, email),
  key crm_contact_name (org_id, name, contact_id),
  key crm_contact_by_email (org_id, email, contact_id),
  constraint crm_contact_org foreign key (org_id) references crm_org (org_id)
) engine = InnoDB default charset = utf8mb4;

create table if not exists crm_note (
  note_id int unsigned not null auto_increment primary key,
  org_id int unsigned not null,
  contact_id int unsigned not null,
  body varchar(2000) not null,
  created_on timestamp not null default current_timestamp,
  key crm_note_by_contact (org_id, contact_id, note_id),
  constraint crm_note_contact foreign key (contact_id) references crm_contact (contact_id),
  constraint crm_note_org foreign key (org_id) references crm_org (org_id)
) engine = InnoDB default charset = utf8mb4;

insert ignore into crm_org (org_id, name) values (1, 'Acme'), (2, 'Globex');
insert ignore into crm_contact (contact_id, org_id, name, email) values
  (1, 1, 'Ann Archer', 'ann@example.com'),
  (2, 1, 'Ben Baker', 'ben@example.com'),
  (3, 2, 'Cai Cooper', 'cai@example.com');
insert ignore into crm_note (note_id, org_id, contact_id, body) values
  (1, 1, 1, 'Wants a quote for 40 teapots.'),
  (2, 2, 3, 'Renewal due in March.');
