-- Workspaces (issue 3): filled by the workspaces work.
select 1;
