// Error messages for a user, never a stack trace (issue 36). LibTorch's errors (c10::Error) carry
// a C++ backtrace after their first line ("Exception raised from … at …", "frame #0: …"); one
// raised inside TorchScript code carries the interpreter's traceback. Every place that shows a
// caught exception to a user — the CLI's stderr, summary.json's reasons, the window's status
// line — goes through here.
#pragma once
#include <exception>
#include <string>

namespace liftlab {

// Whether `what` holds LibTorch's backtrace or TorchScript's traceback.
bool has_torch_trace(const std::string& what);

// `what` as a user should read it: LiftLab's own messages unchanged; a LibTorch one cut to its
// first line (without " (most recent call first)"); a TorchScript one as the Python-side error
// line with the traceback's first frame ("RuntimeError: boom (File "m.py", line 7)").
std::string error_text(const std::string& what);
std::string error_text(const std::exception& e);

// What to do about a LibTorch error, from its message (a frozen model, out of memory, shapes or
// dtypes that do not fit the data, devices); "" for other errors or when nothing specific helps.
std::string error_advice(const std::exception& e);

// error_text with error_advice in brackets: what the CLI, summary.json and the window show for a
// caught exception.
std::string error_message(const std::exception& e);

// A method's failure in LiftLab's words, for summary.json's reason, the CLI and the window (they
// name the method and the step beside it): "<doing> raised: <error_text>; <what to do>" when the
// error is LibTorch's (what to do from the message: a frozen model, out of memory, shapes or
// dtypes that do not fit), else "<doing>: <error_text>".
// `doing` says what LiftLab was doing, e.g. "the training step".
std::string failure_text(const std::string& doing, const std::exception& e);

}  // namespace liftlab
