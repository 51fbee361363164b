#include "server/api/replies.h"

#include <algorithm>

namespace kibitz::server {

Reply queue_full_reply(std::string message) {
  Reply r = error_reply(429, "queue_full", std::move(message));
  r.headers.emplace_back("Retry-After", "1");
  return r;
}

Reply client_cap_reply(const Config& c) {
  Reply r = error_reply(429, "client_work_cap",
                        "this client has " + std::to_string(c.max_work_per_client) +
                            " searches queued or running already (max_work_per_client); retry "
                            "when one has finished");
  r.headers.emplace_back("Retry-After", "1");
  return r;
}

Reply shutting_down_reply() {
  return error_reply(503, "shutting_down", "the server is shutting down");
}

Reply storage_reply(const std::string& why) {
  Reply r =
      error_reply(503, "storage_unavailable",
                  "the job could not be stored, so it was not accepted (" + why + "); retry later");
  r.headers.emplace_back("Retry-After", "5");
  return r;
}

Reply deadline_reply() {
  return error_reply(503, "deadline_exceeded", "the job's deadline passed before it finished");
}

Reply admission_reply(Scheduler::Admission a, const Config& c) {
  switch (a) {
    case Scheduler::Admission::queue_full:
      return queue_full_reply("the analysis queue is full");
    case Scheduler::Admission::client_cap:
      return client_cap_reply(c);
    case Scheduler::Admission::shutting_down:
    case Scheduler::Admission::accepted:
      break;
  }
  return shutting_down_reply();
}

Reply jobs_full_reply(JobsFull full, const Config& c) {
  if (full == JobsFull::owner) {
    Reply r = error_reply(
        429, "client_jobs_cap",
        "this client has " + std::to_string(c.max_jobs_per_client) +
            " jobs kept already (max_jobs_per_client, finished ones included until their "
            "retention ends); retry when some have expired, or read and let them expire");
    r.headers.emplace_back("Retry-After", std::to_string(std::clamp(c.job_retention_s, 1, 60)));
    return r;
  }
  if (full == JobsFull::all)
    return queue_full_reply("too many jobs are kept; retry when some have expired");
  // The id of a repeated submission taken by a job made meanwhile.
  return error_reply(409, "idempotency_key_in_use",
                     "a request with this Idempotency-Key is being processed; retry when it has "
                     "been answered");
}

Reply accepted_reply(const std::string& id) {
  // "queued" as the contract says: accepted into the queue (it may have
  // started, or even finished, by the time the client asks).
  return Reply{202,
               {{"id", id}, {"status", to_string(JobStatus::queued)}},
               nullptr,
               {{"Location", "/v1/jobs/" + id}}};
}

Reply unknown_job_reply(store::Store& store, std::string_view id) {
  if (store.available())
    return error_reply(404, "not_found",
                       "no job '" + std::string(id.substr(0, 64)) +
                           "' (unknown, or finished longer ago than the retention time)");
  Reply r = error_reply(503, "storage_unavailable",
                        "the store cannot be reached to read the job; retry later");
  r.headers.emplace_back("Retry-After", "1");
  return r;
}

Reply crashed_reply(int attempts) {
  return error_reply(500, "crashed",
                     "the job was running when the server stopped " + std::to_string(attempts) +
                         " times; it is not run again");
}

}  // namespace kibitz::server
