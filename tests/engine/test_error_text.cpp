// No raw stack trace reaches a user (issue 36): LibTorch's own errors, as LibTorch throws them,
// come out of core/error_text.h as one line in LiftLab's words, with what to do when the message
// tells; LiftLab's messages pass unchanged.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

#include "core/error_text.h"
#include "core/errors.h"

namespace {

// The error `f` throws (a failure of the test when it throws none).
template <typename F>
std::string message_of(F f, std::string (*show)(const std::exception&)) {
    try {
        f();
    } catch (const std::exception& e) {
        return show(e);
    }
    ADD_FAILURE() << "expected an exception";
    return {};
}

std::string message(const std::exception& e) {
    return liftlab::error_message(e);
}

std::string raw(const std::exception& e) {
    return e.what();
}

void expect_one_clean_line(const std::string& text) {
    EXPECT_EQ(text.find('\n'), std::string::npos) << text;
    EXPECT_EQ(text.find("frame #"), std::string::npos) << text;
    EXPECT_EQ(text.find("Exception raised from"), std::string::npos) << text;
    EXPECT_FALSE(text.empty());
}

}  // namespace

TEST(ErrorText, LibTorchsBacktraceIsCutAndTheAdviceAdded) {
    // A backward through nothing trainable: what a fully frozen model once gave the user.
    auto frozen = [] { (torch::ones({3}) * 2).sum().backward(); };
    const std::string what = message_of(frozen, raw);
    ASSERT_NE(what.find("frame #"), std::string::npos) << "LibTorch without a backtrace? " << what;
    const std::string shown = message_of(frozen, message);
    expect_one_clean_line(shown);
    EXPECT_EQ(shown.rfind("element 0 of tensors does not require grad", 0), 0u) << shown;
    EXPECT_NE(shown.find("requires_grad=False"), std::string::npos) << shown;

    // Shapes that do not fit.
    auto shapes = [] { torch::ones({2, 3}).matmul(torch::ones({2, 3})); };
    const std::string mismatch = message_of(shapes, message);
    expect_one_clean_line(mismatch);
    EXPECT_NE(mismatch.find("shapes do not fit the data"), std::string::npos) << mismatch;

    // failure_text names what LiftLab was doing.
    try {
        frozen();
    } catch (const std::exception& e) {
        const std::string t = liftlab::failure_text("the training step", e);
        expect_one_clean_line(t);
        EXPECT_EQ(t.rfind("the training step raised a LibTorch error: element 0", 0), 0u) << t;
    }
}

TEST(ErrorText, TorchScriptsTracebackBecomesItsErrorLineAndFrame) {
    const std::string what =
        "The following operation failed in the TorchScript interpreter.\n"
        "Traceback of TorchScript, serialized code (most recent call last):\n"
        "  File \"code/__torch__.py\", line 9, in forward\n"
        "    _0 = torch.linear(x, self.w)\n"
        "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x16 and 8x4)\n"
        "Exception raised from meta at ../aten/src/ATen/native/LinearAlgebra.cpp:133 (most "
        "recent call first):\n"
        "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x3e\n";
    const std::string shown = liftlab::error_text(what);
    expect_one_clean_line(shown);
    EXPECT_EQ(shown,
              "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x16 and 8x4) (File "
              "\"code/__torch__.py\", line 9, in forward)");
}

TEST(ErrorText, LiftLabsOwnMessagesPassUnchanged) {
    const liftlab::SpecError e("methods[0].lr", "must be positive for adam");
    EXPECT_EQ(liftlab::error_message(e), std::string(e.what()));
    EXPECT_EQ(liftlab::failure_text("the run", e), "the run: " + std::string(e.what()));
    EXPECT_EQ(liftlab::error_advice(e), "");
}
