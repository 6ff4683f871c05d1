-- Issue 16. Late subscriptions: the outcome each task ended with, kept so a subscription made after
-- the end gets the same notification the on-time subscribers got; identical subscriptions converge.

-- The latest terminal outcome of a task, written by finishTask in the transaction that ends the task
-- (the envelope's outcome and links as sent, and when the task ended). task.stalled is not terminal
-- and is not kept here.
create table task_outcomes (
  tenant_id uuid not null references tenants (id),
  task_kind text not null,
  task_id uuid not null,
  event_type text not null,
  status text not null,
  error_code text,
  summary text not null,
  resource_path text not null,
  occurred_at timestamptz not null,
  updated_at timestamptz not null default now(),
  primary key (tenant_id, task_kind, task_id)
);

-- An identical subscription (same task, channel and target; email addresses compared without case)
-- is the existing one. Identical rows made before this migration stay, each keeping its deliveries:
-- all but the oldest of each group are marked and left out of the uniqueness.
alter table task_notification_subscriptions add column earlier_duplicate boolean not null default false;
update task_notification_subscriptions s set earlier_duplicate = true
where s.id <> (
  select o.id from task_notification_subscriptions o
  where o.tenant_id = s.tenant_id and o.task_kind = s.task_kind and o.task_id = s.task_id and o.channel = s.channel
    and coalesce(lower(o.email_address), o.webhook_url) = coalesce(lower(s.email_address), s.webhook_url)
  order by o.id limit 1
);
create unique index task_notification_subscriptions_identical
  on task_notification_subscriptions (tenant_id, task_kind, task_id, channel, (coalesce(lower(email_address), webhook_url)))
  where not earlier_duplicate;

-- The decision is a resource with its own id (issue 16, item 7): one per evaluation's computed
-- decision, made when the decision is stored; decisions stored before this migration get one here.
alter table evaluation_decisions add column id uuid;
update evaluation_decisions set id = gen_random_uuid() where id is null;
alter table evaluation_decisions alter column id set not null;
create unique index evaluation_decisions_id on evaluation_decisions (tenant_id, id);
