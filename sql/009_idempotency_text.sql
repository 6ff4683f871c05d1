-- Replays must return the stored body byte for byte: jsonb reorders object keys, text does not.
alter table idempotency_keys alter column response_body type text using response_body::text;
