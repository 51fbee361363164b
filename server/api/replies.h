// The API's refusals and acknowledgements, each written once: every room
// (jobs, interactive work, the scheduler, the work itself) answers with
// these, so one code always comes with the same status, message and
// Retry-After. error_reply and internal_reply are in api.h.
#pragma once

#include <string>
#include <string_view>

#include "server/api/api.h"
#include "server/api/config.h"
#include "server/api/scheduler.h"
#include "server/store/store.h"

namespace kibitz::server {

// 429 queue_full, Retry-After 1.
Reply queue_full_reply(std::string message);
// 429 client_work_cap: max_work_per_client searches queued or running.
Reply client_cap_reply(const Config& c);
// 503 shutting_down.
Reply shutting_down_reply();
// 503 storage_unavailable: a job that could not be stored, Retry-After 5.
Reply storage_reply(const std::string& why);
// 503 deadline_exceeded: a job's deadline passed before it finished.
Reply deadline_reply();
// The answer to a work the scheduler did not admit.
Reply admission_reply(Scheduler::Admission a, const Config& c);
// Why a job could not be made in this instance's job table (jobs.h
// JobTable::Full): 429 client_jobs_cap, 429 queue_full, or 409
// idempotency_key_in_use (a repeated submission's id taken meanwhile).
enum class JobsFull { no, all, owner };
Reply jobs_full_reply(JobsFull full, const Config& c);
// 202 {"id", "status": "queued"} with its Location.
Reply accepted_reply(const std::string& id);
// 404 not_found for a job id, or 503 storage_unavailable when the store
// cannot be asked (Redis does not answer): then the job may well exist.
Reply unknown_job_reply(store::Store& store, std::string_view id);
// 500 crashed: a job that ended the process `attempts` times.
Reply crashed_reply(int attempts);

}  // namespace kibitz::server
