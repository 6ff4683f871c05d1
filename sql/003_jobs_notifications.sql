-- Jobs and task notifications (issue 4): filled by the job-runner work.
select 1;
