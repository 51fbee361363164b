// Exceptions stopped at a boundary (a thread's task, a callback into
// someone else's code): the one way the project turns "something threw"
// into text for an error report.
#pragma once

#include <exception>
#include <string>

namespace kibitz {

// The text of the exception being handled; call only inside a catch block.
inline std::string current_exception_text() {
  try {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception of unknown type";
  }
}

// Runs f(); if it throws, on_error(text) runs instead of the exception
// going on. on_error itself must not throw.
template <class F, class OnError>
void contained(F&& f, OnError&& on_error) {
  try {
    f();
  } catch (...) {
    on_error(current_exception_text());
  }
}

}  // namespace kibitz
