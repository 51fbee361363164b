// The job queue shared by several instances (store.backend "redis"): a job
// is submitted on one instance and run by whichever has a free search
// thread. The Store that has one returns it from Store::queue(); the
// single-instance backends have none, and their jobs run where they came.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "server/store/store.h"

namespace kibitz::server::store {

class JobQueue {  // thread-safe
 public:
  virtual ~JobQueue() = default;

  // Up to `max` jobs for this instance to run: first those that another
  // instance took and stopped holding (it died: idle past the claim time),
  // then new ones, waiting up to `wait_ms` for one. A job returned is held
  // by this instance (kept alive by the store) until its end is stored with
  // Store::update_job, or it is handed back. Finished or removed jobs are
  // never returned. Called from one thread.
  virtual std::vector<JobRecord> take(int max, int wait_ms) = 0;

  // Asks the instance that holds the job to stop it (a DELETE that came to
  // another instance). The job's cancel_requested is stored by the caller.
  virtual void publish_cancel(const std::string& id) = 0;

  // `handler(id, finished_elsewhere)` is called on a thread of the store when
  // a job this instance holds is to stop: cancelled by a client
  // (false), or finished by another instance meanwhile (true: its end is
  // not to be stored). Set once, before take().
  virtual void on_stop(
      std::function<void(const std::string& id, bool finished_elsewhere)> handler) = 0;

  // Stops taking jobs; every job still held and unfinished goes back to the
  // queue for another instance (a drain). Called at shutdown, after the
  // jobs that could finish have stored their end.
  virtual void hand_back_all() = 0;
};

}  // namespace kibitz::server::store
