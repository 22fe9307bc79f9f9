// The pickle check of the TorchScript reader on its own (nn/torchscript_pickle_check.h), with
// hand-assembled pickles: its opcode table against Python's (Lib/pickletools.py), the pickles
// Python writes pass, and every rule it enforces is broken once.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "nn/torchscript_pickle_check.h"

namespace liftlab {
namespace {

// Records of the archive: "r/0" holds 16 bytes.
std::optional<uint64_t> sixteen_byte_record(const std::string& name) {
    if (name == "r/0") return 16;
    return std::nullopt;
}

std::string pickle_verdict(const std::string& pickle) {
    return pickle_problem(pickle, "r/", sixteen_byte_record);
}

std::string u32(uint32_t v) {
    std::string s;
    for (int i = 0; i < 4; ++i) s += static_cast<char>((v >> (8 * i)) & 0xFF);
    return s;
}

std::string unicode(const std::string& text) {  // BINUNICODE
    return "X" + u32(static_cast<uint32_t>(text.size())) + text;
}

TEST(TorchScriptPickle, TheOpcodeTableIsPythonsProtocols0To5) {
    // name: (opcode, argument, bytes), as Lib/pickletools.py documents them.
    using A = PickleArgument;
    const std::map<std::string, std::tuple<unsigned char, A, int>> python = {
        {"INT", {'I', A::lines, 1}},
        {"BININT", {'J', A::fixed, 4}},
        {"BININT1", {'K', A::fixed, 1}},
        {"BININT2", {'M', A::fixed, 2}},
        {"LONG", {'L', A::lines, 1}},
        {"LONG1", {0x8a, A::length_prefixed, 1}},
        {"LONG4", {0x8b, A::length_prefixed, 4}},
        {"STRING", {'S', A::lines, 1}},
        {"BINSTRING", {'T', A::length_prefixed, 4}},
        {"SHORT_BINSTRING", {'U', A::length_prefixed, 1}},
        {"BINBYTES", {'B', A::length_prefixed, 4}},
        {"SHORT_BINBYTES", {'C', A::length_prefixed, 1}},
        {"BINBYTES8", {0x8e, A::length_prefixed, 8}},
        {"BYTEARRAY8", {0x96, A::length_prefixed, 8}},
        {"NEXT_BUFFER", {0x97, A::none, 0}},
        {"READONLY_BUFFER", {0x98, A::none, 0}},
        {"NONE", {'N', A::none, 0}},
        {"NEWTRUE", {0x88, A::none, 0}},
        {"NEWFALSE", {0x89, A::none, 0}},
        {"UNICODE", {'V', A::lines, 1}},
        {"SHORT_BINUNICODE", {0x8c, A::length_prefixed, 1}},
        {"BINUNICODE", {'X', A::length_prefixed, 4}},
        {"BINUNICODE8", {0x8d, A::length_prefixed, 8}},
        {"FLOAT", {'F', A::lines, 1}},
        {"BINFLOAT", {'G', A::fixed, 8}},
        {"EMPTY_LIST", {']', A::none, 0}},
        {"APPEND", {'a', A::none, 0}},
        {"APPENDS", {'e', A::none, 0}},
        {"LIST", {'l', A::none, 0}},
        {"EMPTY_TUPLE", {')', A::none, 0}},
        {"TUPLE", {'t', A::none, 0}},
        {"TUPLE1", {0x85, A::none, 0}},
        {"TUPLE2", {0x86, A::none, 0}},
        {"TUPLE3", {0x87, A::none, 0}},
        {"EMPTY_DICT", {'}', A::none, 0}},
        {"DICT", {'d', A::none, 0}},
        {"SETITEM", {'s', A::none, 0}},
        {"SETITEMS", {'u', A::none, 0}},
        {"EMPTY_SET", {0x8f, A::none, 0}},
        {"ADDITEMS", {0x90, A::none, 0}},
        {"FROZENSET", {0x91, A::none, 0}},
        {"POP", {'0', A::none, 0}},
        {"DUP", {'2', A::none, 0}},
        {"MARK", {'(', A::none, 0}},
        {"POP_MARK", {'1', A::none, 0}},
        {"GET", {'g', A::lines, 1}},
        {"BINGET", {'h', A::fixed, 1}},
        {"LONG_BINGET", {'j', A::fixed, 4}},
        {"PUT", {'p', A::lines, 1}},
        {"BINPUT", {'q', A::fixed, 1}},
        {"LONG_BINPUT", {'r', A::fixed, 4}},
        {"MEMOIZE", {0x94, A::none, 0}},
        {"EXT1", {0x82, A::fixed, 1}},
        {"EXT2", {0x83, A::fixed, 2}},
        {"EXT4", {0x84, A::fixed, 4}},
        {"GLOBAL", {'c', A::lines, 2}},
        {"STACK_GLOBAL", {0x93, A::none, 0}},
        {"REDUCE", {'R', A::none, 0}},
        {"BUILD", {'b', A::none, 0}},
        {"INST", {'i', A::lines, 2}},
        {"OBJ", {'o', A::none, 0}},
        {"NEWOBJ", {0x81, A::none, 0}},
        {"NEWOBJ_EX", {0x92, A::none, 0}},
        {"PROTO", {0x80, A::fixed, 1}},
        {"STOP", {'.', A::none, 0}},
        {"FRAME", {0x95, A::fixed, 8}},
        {"PERSID", {'P', A::lines, 1}},
        {"BINPERSID", {'Q', A::none, 0}},
    };
    ASSERT_EQ(python.size(), 68u);
    size_t known = 0;
    for (int code = 0; code < 256; ++code) {
        const PickleOpcode* op = pickle_opcode(static_cast<unsigned char>(code));
        if (!op) continue;
        ++known;
        ASSERT_NE(op->name, nullptr);
        ASSERT_EQ(op->code, code) << op->name;
        const auto it = python.find(op->name);
        ASSERT_NE(it, python.end()) << op->name << " is not one of Python's opcodes";
        const auto& [want_code, want_argument, want_bytes] = it->second;
        EXPECT_EQ(op->code, want_code) << op->name;
        EXPECT_EQ(op->argument, want_argument) << op->name;
        EXPECT_EQ(op->bytes, want_bytes) << op->name;
    }
    EXPECT_EQ(known, python.size());
}

TEST(TorchScriptPickle, EveryArgumentIsBoundedByThePickle) {
    // One byte short of each fixed argument, or a length past the pickle's end.
    for (int code = 0; code < 256; ++code) {
        const PickleOpcode* op = pickle_opcode(static_cast<unsigned char>(code));
        if (!op || op->bytes == 0 || op->argument == PickleArgument::lines) continue;
        const std::string opcode(1, static_cast<char>(code));
        EXPECT_NE(pickle_verdict(opcode + std::string(op->bytes - 1, '\x01'))
                      .find("ends inside an opcode"),
                  std::string::npos)
            << op->name;
        if (op->argument != PickleArgument::length_prefixed) continue;
        std::string length(op->bytes, '\0');
        length[0] = '\x64';  // 100
        EXPECT_EQ(pickle_verdict(opcode + length + "abc"), "a 100-byte string where 3 bytes remain")
            << op->name;
    }
}

TEST(TorchScriptPickle, PicklesAsPythonWritesThemPass) {
    // pickle.dumps({'a': 1, 'b': [2, 3]}, protocol=2)
    const std::string dict = std::string("\x80\x02}q\x00(", 6) + unicode("a") + "q\x01K\x01" +
                             unicode("b") + "q\x02]q\x03(K\x02K\x03" + "eu.";
    EXPECT_EQ(pickle_verdict(dict), "");
    // A storage id whose 4 floats fill the 16-byte record; memoised and read back.
    const std::string storage = "(" + unicode("storage") + "ctorch\nFloatStorage\n" + unicode("0") +
                                unicode("cpu") + "K\x04t";
    EXPECT_EQ(pickle_verdict("\x80\x02" + storage + "Q\x94h" + std::string(1, '\0') + "\x86."), "");
    // Nothing after STOP, and nothing from the first byte that is not an opcode, is read.
    EXPECT_EQ(pickle_verdict("N.(\x87"), "");
    EXPECT_EQ(pickle_verdict("N\xff(\x87"), "");
}

TEST(TorchScriptPickle, TheStackMarksAndMemoAreKeptAsPythonKeepsThem) {
    EXPECT_EQ(pickle_verdict("(\x87"),
              "it takes 3 values where its stack holds 0 (opcode 0x87 at byte 1)");
    EXPECT_EQ(pickle_verdict("NN(Na"),
              "it takes 2 values where its stack holds 1 (opcode 0x61 at byte 4)");
    EXPECT_EQ(pickle_verdict("."), "it stops with nothing on its stack (opcode 0x2e at byte 0)");
    EXPECT_EQ(pickle_verdict("Nt"), "it closes a mark it never opened (opcode 0x74 at byte 1)");
    EXPECT_EQ(pickle_verdict("(NNNd"),
              "a dict with an odd number of keys and values (opcode 0x64 at byte 4)");
    EXPECT_EQ(pickle_verdict("}(NNNu"),
              "a dict with an odd number of keys and values (opcode 0x75 at byte 5)");
    EXPECT_EQ(pickle_verdict("(Ne"),
              "it adds to a container below its mark, and there is none (opcode 0x65 at byte 2)");
    EXPECT_EQ(pickle_verdict("(o"), "an object with no class (opcode 0x6f at byte 1)");
    EXPECT_EQ(pickle_verdict("Nr" + u32(0xfffffff0) + "0"),
              "a memo index of 4294967280 in a pickle of 7 bytes");
    EXPECT_EQ(pickle_verdict("h\x05"),
              "it reads memo slot 5 before writing it (opcode 0x68 at byte 0)");
    EXPECT_EQ(pickle_verdict("N\x94\x30h" + std::string(1, '\0') + "."),
              "");  // MEMOIZE, POP, BINGET 0
}

TEST(TorchScriptPickle, NestingIsBounded) {
    // Each TUPLE1 nests the value below once more: a NONE inside 999 tuples is 1000 deep.
    EXPECT_EQ(pickle_verdict("N" + std::string(kMaxPickleNesting - 1, '\x85') + "."), "");
    EXPECT_EQ(pickle_verdict("N" + std::string(kMaxPickleNesting, '\x85') + "."),
              "it nests values more than 1000 deep (opcode 0x85 at byte 1000)");
    // A list is one deeper than what APPEND puts into it.
    EXPECT_EQ(pickle_verdict("]N" + std::string(kMaxPickleNesting - 2, '\x85') + "a."), "");
    EXPECT_NE(
        pickle_verdict("]N" + std::string(kMaxPickleNesting - 1, '\x85') + "a.").find("nests"),
        std::string::npos);
}

TEST(TorchScriptPickle, ATensorStorageMustFitItsRecord) {
    const auto storage = [](const std::string& key, const std::string& count) {
        return "(" + unicode("storage") + "ctorch\nFloatStorage\n" + unicode(key) + unicode("cpu") +
               count + "tQ.";
    };
    EXPECT_EQ(pickle_verdict(storage("0", "K\x04")), "");
    const std::string five = pickle_verdict(storage("0", "K\x05"));
    EXPECT_EQ(five.rfind("a tensor storage of 5 elements of 4 bytes where its record '0' holds "
                         "16 bytes (opcode 0x51 at byte ",
                         0),
              0u)
        << five;
    EXPECT_NE(
        pickle_verdict(storage("0", "J" + u32(0xffffffff))).find("a tensor storage of -1 elements"),
        std::string::npos);
    // A record the archive does not hold: LibTorch's reader says so.
    EXPECT_EQ(pickle_verdict(storage("7", "K\x05")), "");
    // A double storage of 2 fills the record; of 3, it does not.
    const std::string doubles = "(" + unicode("storage") + "ctorch\nDoubleStorage\n" +
                                unicode("0") + unicode("cpu") + "K\x03tQ.";
    EXPECT_NE(pickle_verdict(doubles).find("3 elements of 8 bytes"), std::string::npos);
    EXPECT_EQ(pickle_verdict("NQ."),
              "a tensor storage not named as PyTorch names them (opcode 0x51 at byte 1)");
    // Not torch's storage type: not a storage id.
    EXPECT_NE(pickle_verdict("(" + unicode("storage") + "cnumpy\nFloatStorage\n" + unicode("0") +
                             unicode("cpu") + "K\x04tQ.")
                  .find("not named as PyTorch names them"),
              std::string::npos);
}

}  // namespace
}  // namespace liftlab
