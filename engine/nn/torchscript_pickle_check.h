// The check of a TorchScript archive's pickles (data.pkl, constants.pkl, the code's debug
// pickles) before LibTorch's unpickler reads them. No LibTorch here.
//
// LibTorch's unpickler trusts what a pickle declares. Lengths and memo indices: a string said to
// be 400 MB long is allocated (and zeroed) before the reader finds the file ends, a memo index
// of 2³² reserves 64 GB (found by fuzzing: 13 kB files held LiftLab for seconds, or ran it out
// of memory). Its stack: LibTorch 1.13 reads the top of an empty stack for TUPLE1, BINPERSID and
// others, and past the stack's end for a mark above the top or a dict with an odd number of
// keys and values (found by fuzzing: a crash). A tensor's storage: its element count is taken
// as declared over a record that may be shorter (training then read past the record: found
// while fixing the crash). Deep nesting overflows its stack when the values are destroyed. So
// the opcodes are walked first, with the stack, the marks and the memo, by Python's rules for
// each opcode (which every pickle Python or PyTorch writes keeps).
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace liftlab {

// How an opcode's argument follows it in the pickle.
enum class PickleArgument : uint8_t {
    none,
    fixed,            // `bytes` bytes
    length_prefixed,  // a little-endian length of `bytes` bytes, then that many bytes
    lines,            // `bytes` lines of text, each ended by '\n'
};

// What an opcode does to the unpickler's stack, marks and memo, as far as the walk follows it.
enum class PickleEffect : uint8_t {
    stop,            // STOP: the result is the top of the stack
    nothing,         // PROTO, FRAME
    mark,            // MARK: opens a mark
    push_int,        // BININT1/2/4: an int (BININT signed)
    push_long,       // LONG1: an int when it has 8 bytes (as LibTorch reads it)
    push_string,     // the unicode strings ("storage" noted)
    push_global,     // GLOBAL: torch.<T>Storage noted as a storage type
    push_other,      // any other value: constants, other strings, empty containers, EXT, GET…
    memo_get,        // BINGET, LONG_BINGET: a written slot
    memo_put,        // BINPUT, LONG_BINPUT, MEMOIZE: the top into a slot
    take_one,        // PUT (a decimal slot, which LibTorch refuses), READONLY_BUFFER
    pop,             // POP
    pop_mark,        // POP_MARK
    dup,             // DUP
    persistent_id,   // BINPERSID: a tensor's storage from its record
    combine,         // `count` values become one (REDUCE, BUILD, NEWOBJ, TUPLE1…)
    append,          // APPEND: into the container below
    set_item,        // SETITEM: a key and a value into the dict below
    tuple,           // TUPLE: the values above the mark; a storage id when it is one
    collect,         // LIST, FROZENSET, INST: the values above the mark become one
    collect_pairs,   // DICT: as collect, keys and values in pairs
    collect_object,  // OBJ: as collect, a class first
    add_items,       // APPENDS, ADDITEMS: the values above the mark into the container below it
    add_pairs,       // SETITEMS: as add_items, keys and values in pairs
};

// One opcode of Python's pickle protocols 0 to 5 (Lib/pickletools.py names them).
struct PickleOpcode {
    unsigned char code = 0;
    const char* name = nullptr;  // nullptr: not an opcode
    PickleArgument argument = PickleArgument::none;
    uint8_t bytes = 0;  // see PickleArgument
    PickleEffect effect = PickleEffect::push_other;
    uint8_t count = 0;  // combine: how many values
};

// The one table of opcodes the walk knows: the entry of `code`, or nullptr for a byte that is not
// an opcode (the walk then ends and leaves the pickle to LibTorch, which refuses it).
const PickleOpcode* pickle_opcode(unsigned char code);

// LibTorch destroys nested values recursively: a pickle of a million nested tuples (1 MB)
// overflowed its stack. PyTorch's own files nest a few levels per submodule.
constexpr uint32_t kMaxPickleNesting = 1000;

// The size of a record of the archive (the bytes LibTorch allocates for it) by its name, or
// nullopt when there is none.
using RecordSize = std::function<std::optional<uint64_t>(const std::string& name)>;

// Walks `pickle`'s opcodes with the stack, the marks and the memo, by Python's rules. `records`
// is where a storage's key is found (the pickle's name without ".pkl", then "/": a storage "0"
// of data.pkl is the record "data/0"). Returns the problem ("it takes 3 values where its stack
// holds 0 (opcode 0x87 at byte 2)"), or "" when none is seen before STOP, the end of the pickle
// or the first byte that is not an opcode.
std::string pickle_problem(const std::string& pickle, const std::string& records,
                           const RecordSize& record_size);

}  // namespace liftlab
