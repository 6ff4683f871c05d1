-- The request that started a job or a delivery: its request id and W3C traceparent (the trace id
-- and the enqueuing span), so one id finds the access line, the job's log lines, the delivery
-- record and the webhook's traceparent header. Additive: nullable columns, no rewrite, no index
-- (looked up by operators, by id, rarely).
alter table jobs add column if not exists request_id text;
alter table jobs add column if not exists traceparent text;
alter table notification_deliveries add column if not exists request_id text;
alter table notification_deliveries add column if not exists traceparent text;
