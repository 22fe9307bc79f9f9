#include "core/error_text.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <cctype>
#include <sstream>

namespace liftlab {

namespace {

bool mentions(const std::string& text, const char* needle) {
    return text.find(needle) != std::string::npos;
}

// What to do about a LibTorch error, from its (lower-case) first line; "" when nothing specific.
std::string torch_error_advice(std::string line) {
    std::transform(line.begin(), line.end(), line.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (mentions(line, "does not require grad"))
        return "nothing on this path has a trainable parameter: is every parameter of the model "
               "frozen (requires_grad=False)? Leave at least one layer trainable";
    if (mentions(line, "out of memory") || mentions(line, "can't allocate") ||
        mentions(line, "bad_alloc") || mentions(line, "not enough memory"))
        return "not enough memory: lower batch_size, the model's width or task.n_train";
    if (mentions(line, "expected scalar type") || mentions(line, "dtype") ||
        mentions(line, "expected all tensors to be of"))
        return "the model's tensors and the data differ in dtype: LiftLab feeds float32, so make "
               "the model's parameters, buffers and constants float32";
    if (mentions(line, "shape") || mentions(line, "size mismatch") || mentions(line, "mat1") ||
        mentions(line, "dimension") || mentions(line, "must match the size") ||
        mentions(line, "size of tensor"))
        return "the model's shapes do not fit the data: check its input and output sizes against "
               "the task's (liftlab-cli list)";
    if (mentions(line, "device") || mentions(line, "cuda"))
        return "the model and the data are on different devices: set device=cpu";
    return "";
}

// The line of a LibTorch message a user needs (see error_text).
std::string torch_first_line(const std::string& what) {
    // An error inside TorchScript code ends with the Python-side error ("RuntimeError: …") after
    // the interpreter's traceback: that line, with the traceback's first frame. With the debug
    // pickles hidden (torchscript_module.cpp) the one traceback is of the archive's code; with
    // them, the original code's comes last.
    auto at = what.find("Traceback of TorchScript, original code");
    if (at == std::string::npos) at = what.find("Traceback of TorchScript");
    if (at != std::string::npos) {
        std::string last;
        std::istringstream lines(what.substr(at));
        std::string line, frame;
        while (std::getline(lines, line)) {
            if (line.find_first_not_of(" \t") == std::string::npos) continue;
            // The C++ backtrace of the error that ended the interpreter is no line of the user's.
            if (mentions(line, "Exception raised from") || line.rfind("frame #", 0) == 0) break;
            if (frame.empty() && line.rfind("  File \"", 0) == 0) frame = line.substr(2);
            last = line;
        }
        return last + (frame.empty() ? "" : " (" + frame + ")");
    }
    std::string line = what.substr(0, what.find('\n'));
    for (const char* tail : {" (most recent call first)", "Exception raised from"}) {
        const auto pos = line.find(tail);
        if (pos != std::string::npos) line = line.substr(0, pos);
    }
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    return line.empty() ? "LibTorch failed without a message" : line;
}

}  // namespace

bool has_torch_trace(const std::string& what) {
    return mentions(what, "Exception raised from") || mentions(what, "frame #") ||
           mentions(what, "Traceback of TorchScript") || mentions(what, "(most recent call first)");
}

std::string error_text(const std::string& what) {
    return has_torch_trace(what) ? torch_first_line(what) : what;
}

std::string error_text(const std::exception& e) {
    if (const auto* c10 = dynamic_cast<const c10::Error*>(&e))
        return torch_first_line(c10->what_without_backtrace());
    return error_text(std::string(e.what()));
}

std::string error_advice(const std::exception& e) {
    const bool torch = dynamic_cast<const c10::Error*>(&e) != nullptr || has_torch_trace(e.what());
    return torch ? torch_error_advice(error_text(e)) : std::string();
}

std::string error_message(const std::exception& e) {
    const std::string advice = error_advice(e);
    return error_text(e) + (advice.empty() ? "" : " (" + advice + ")");
}

std::string failure_text(const std::string& doing, const std::exception& e) {
    const bool torch = dynamic_cast<const c10::Error*>(&e) != nullptr || has_torch_trace(e.what());
    return doing + (torch ? " raised a LibTorch error: " : ": ") + error_message(e);
}

}  // namespace liftlab
