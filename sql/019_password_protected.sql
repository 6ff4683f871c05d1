-- A file that needs a password to be opened (issue 24) fails with its own error code, so a client
-- can tell "remove the password" from a damaged file: the error-code checks of case documents and
-- guideline sources admit `document_password_protected` / `guideline_password_protected`. The new
-- checks are wider than the old ones, which held for every row, so they are added NOT VALID (no
-- scan under the lock) and are enforced for every write from now on.
alter table documents drop constraint if exists documents_error_code_check;
alter table documents add constraint documents_error_code_check
  check (error_code in ('document_ingestion_failed', 'document_password_protected', 'unsupported_pending')) not valid;
alter table guidelines drop constraint if exists guidelines_error_code_check;
alter table guidelines add constraint guidelines_error_code_check
  check (error_code in ('guideline_ingestion_failed', 'guideline_password_protected', 'unsupported_pending')) not valid;
