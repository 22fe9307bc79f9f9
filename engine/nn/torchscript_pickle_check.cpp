#include "nn/torchscript_pickle_check.h"

#include <algorithm>
#include <array>
#include <map>
#include <unordered_map>
#include <vector>

#include "nn/torchscript_archive.h"

namespace liftlab {

namespace {

using Arg = PickleArgument;
using Fx = PickleEffect;

// Every opcode of protocols 0 to 5, once: its argument and its effect on the stack.
constexpr PickleOpcode kPickleOpcodes[] = {
    // protocol and framing
    {0x80, "PROTO", Arg::fixed, 1, Fx::nothing},
    {0x95, "FRAME", Arg::fixed, 8, Fx::nothing},
    {'.', "STOP", Arg::none, 0, Fx::stop},
    {'(', "MARK", Arg::none, 0, Fx::mark},
    // numbers
    {'K', "BININT1", Arg::fixed, 1, Fx::push_int},
    {'M', "BININT2", Arg::fixed, 2, Fx::push_int},
    {'J', "BININT", Arg::fixed, 4, Fx::push_int},
    {0x8a, "LONG1", Arg::length_prefixed, 1, Fx::push_long},
    {0x8b, "LONG4", Arg::length_prefixed, 4, Fx::push_other},
    {'I', "INT", Arg::lines, 1, Fx::push_other},
    {'L', "LONG", Arg::lines, 1, Fx::push_other},
    {'F', "FLOAT", Arg::lines, 1, Fx::push_other},
    {'G', "BINFLOAT", Arg::fixed, 8, Fx::push_other},
    // strings and bytes
    {'X', "BINUNICODE", Arg::length_prefixed, 4, Fx::push_string},
    {0x8c, "SHORT_BINUNICODE", Arg::length_prefixed, 1, Fx::push_string},
    {0x8d, "BINUNICODE8", Arg::length_prefixed, 8, Fx::push_string},
    {'V', "UNICODE", Arg::lines, 1, Fx::push_other},
    {'S', "STRING", Arg::lines, 1, Fx::push_other},
    {'T', "BINSTRING", Arg::length_prefixed, 4, Fx::push_other},
    {'U', "SHORT_BINSTRING", Arg::length_prefixed, 1, Fx::push_other},
    {'B', "BINBYTES", Arg::length_prefixed, 4, Fx::push_other},
    {'C', "SHORT_BINBYTES", Arg::length_prefixed, 1, Fx::push_other},
    {0x8e, "BINBYTES8", Arg::length_prefixed, 8, Fx::push_other},
    {0x96, "BYTEARRAY8", Arg::length_prefixed, 8, Fx::push_other},
    {0x97, "NEXT_BUFFER", Arg::none, 0, Fx::push_other},
    {0x98, "READONLY_BUFFER", Arg::none, 0, Fx::take_one},
    // constants and empty containers
    {'N', "NONE", Arg::none, 0, Fx::push_other},
    {0x88, "NEWTRUE", Arg::none, 0, Fx::push_other},
    {0x89, "NEWFALSE", Arg::none, 0, Fx::push_other},
    {')', "EMPTY_TUPLE", Arg::none, 0, Fx::push_other},
    {']', "EMPTY_LIST", Arg::none, 0, Fx::push_other},
    {'}', "EMPTY_DICT", Arg::none, 0, Fx::push_other},
    {0x8f, "EMPTY_SET", Arg::none, 0, Fx::push_other},
    // containers
    {0x85, "TUPLE1", Arg::none, 0, Fx::combine, 1},
    {0x86, "TUPLE2", Arg::none, 0, Fx::combine, 2},
    {0x87, "TUPLE3", Arg::none, 0, Fx::combine, 3},
    {'t', "TUPLE", Arg::none, 0, Fx::tuple},
    {'l', "LIST", Arg::none, 0, Fx::collect},
    {0x91, "FROZENSET", Arg::none, 0, Fx::collect},
    {'d', "DICT", Arg::none, 0, Fx::collect_pairs},
    {'a', "APPEND", Arg::none, 0, Fx::append},
    {'e', "APPENDS", Arg::none, 0, Fx::add_items},
    {0x90, "ADDITEMS", Arg::none, 0, Fx::add_items},
    {'s', "SETITEM", Arg::none, 0, Fx::set_item},
    {'u', "SETITEMS", Arg::none, 0, Fx::add_pairs},
    // the stack and the memo
    {'0', "POP", Arg::none, 0, Fx::pop},
    {'1', "POP_MARK", Arg::none, 0, Fx::pop_mark},
    {'2', "DUP", Arg::none, 0, Fx::dup},
    {'g', "GET", Arg::lines, 1, Fx::push_other},
    {'h', "BINGET", Arg::fixed, 1, Fx::memo_get},
    {'j', "LONG_BINGET", Arg::fixed, 4, Fx::memo_get},
    {'p', "PUT", Arg::lines, 1, Fx::take_one},
    {'q', "BINPUT", Arg::fixed, 1, Fx::memo_put},
    {'r', "LONG_BINPUT", Arg::fixed, 4, Fx::memo_put},
    {0x94, "MEMOIZE", Arg::none, 0, Fx::memo_put},
    // objects
    {'c', "GLOBAL", Arg::lines, 2, Fx::push_global},
    {0x93, "STACK_GLOBAL", Arg::none, 0, Fx::combine, 2},
    {'R', "REDUCE", Arg::none, 0, Fx::combine, 2},
    {'b', "BUILD", Arg::none, 0, Fx::combine, 2},
    {0x81, "NEWOBJ", Arg::none, 0, Fx::combine, 2},
    {0x92, "NEWOBJ_EX", Arg::none, 0, Fx::combine, 3},
    {'i', "INST", Arg::lines, 2, Fx::collect},
    {'o', "OBJ", Arg::none, 0, Fx::collect_object},
    {0x82, "EXT1", Arg::fixed, 1, Fx::push_other},
    {0x83, "EXT2", Arg::fixed, 2, Fx::push_other},
    {0x84, "EXT4", Arg::fixed, 4, Fx::push_other},
    {'P', "PERSID", Arg::lines, 1, Fx::push_other},
    {'Q', "BINPERSID", Arg::none, 0, Fx::persistent_id},
};

// The item size of torch.<name> (a storage type LibTorch 1.13 reads), or 0.
int64_t storage_item_size(const std::string& name) {
    static const std::map<std::string, int64_t> sizes = {
        {"ByteStorage", 1},         {"CharStorage", 1},           {"ShortStorage", 2},
        {"IntStorage", 4},          {"LongStorage", 8},           {"HalfStorage", 2},
        {"FloatStorage", 4},        {"DoubleStorage", 8},         {"ComplexHalfStorage", 4},
        {"ComplexFloatStorage", 8}, {"ComplexDoubleStorage", 16}, {"BoolStorage", 1},
        {"QInt8Storage", 1},        {"QUInt8Storage", 1},         {"QInt32Storage", 4},
        {"BFloat16Storage", 2},     {"QUInt4x2Storage", 1},       {"QUInt2x4Storage", 1}};
    const auto it = sizes.find(name);
    return it == sizes.end() ? 0 : it->second;
}

// One value on a pickle's stack, as far as the walk follows it: enough to check a tensor's
// storage (BINPERSID's argument ('storage', torch.<T>Storage, key, device, element count)) and
// how deep containers nest.
struct PickleValue {
    char kind = '?';            // '?' anything else, 'i' an int, 's' a string, 'g' a storage type,
                                // 'p' a storage id, 'S' the string "storage"
    int64_t number = 0;         // 'i' its value, 'g' the item size, 'p' the element count
    size_t at = 0, length = 0;  // 's', 'p' (its key): where the string lies in the pickle
    int64_t item_size = 0;      // 'p'
    uint32_t nest = 1;          // containers in containers, this value included
};

// The walk of one pickle: each step reads an opcode's argument, then applies its effect. A step
// that finds a problem sets `problem_` and returns false.
class PickleWalk {
public:
    PickleWalk(const std::string& p, const std::string& records, const RecordSize& record_size)
        : p_(p), records_(records), record_size_(record_size) {}

    std::string run() {
        while (i_ < p_.size() && !stopped_) {
            at_ = i_;
            op_ = static_cast<unsigned char>(p_[i_++]);
            const PickleOpcode* op = pickle_opcode(op_);
            if (!op) return {};
            if (!read_argument(*op)) return problem_;
            floor_ = marks_.empty() ? 0 : marks_.back();
            if (!apply(*op)) return problem_;
        }
        return {};
    }

private:
    std::string where() const {
        static const char* hex = "0123456789abcdef";
        return std::string(" (opcode 0x") + hex[op_ >> 4] + hex[op_ & 15] + " at byte " +
               std::to_string(at_) + ")";
    }

    bool fail(std::string problem) {
        problem_ = std::move(problem);
        return false;
    }

    bool read_argument(const PickleOpcode& op) {
        const size_t n = p_.size();
        arg_ = i_, arg_length_ = 0;
        switch (op.argument) {
            case Arg::none:
                return true;
            case Arg::lines:
                for (int l = 0; l < op.bytes; ++l) {
                    const size_t end = p_.find('\n', i_);
                    i_ = end == std::string::npos ? n : end + 1;
                }
                arg_length_ = i_ - arg_;
                return true;
            case Arg::fixed:
                if (n - i_ < op.bytes) return fail("it ends inside an opcode" + where());
                arg_length_ = op.bytes;
                i_ += arg_length_;
                return true;
            case Arg::length_prefixed: {
                if (n - i_ < op.bytes) return fail("it ends inside an opcode" + where());
                const uint64_t length = little_endian_at(p_, i_, op.bytes);
                i_ += op.bytes;
                if (length > n - i_)
                    return fail("a " + std::to_string(length) + "-byte string where " +
                                std::to_string(n - i_) + " bytes remain");
                arg_ = i_, arg_length_ = length;
                i_ += length;
                return true;
            }
        }
        return true;
    }

    // Values are taken only from above the open mark, as in Python.
    bool take(size_t k) {
        if (stack_.size() - floor_ >= k) return true;
        return fail("it takes " + std::to_string(k) + " value" + (k == 1 ? "" : "s") +
                    " where its stack holds " + std::to_string(stack_.size() - floor_) + where());
    }
    uint32_t deepest(size_t from) const {  // the deepest nesting among stack_[from…]
        uint32_t d = 0;
        for (size_t k = from; k < stack_.size(); ++k) d = std::max(d, stack_[k].nest);
        return d;
    }
    bool push(PickleValue v) {  // by value: `v` may be an element of the stack
        if (v.nest > kMaxPickleNesting)
            return fail("it nests values more than " + std::to_string(kMaxPickleNesting) + " deep" +
                        where());
        stack_.push_back(v);
        return true;
    }
    bool combine(size_t k) {  // k values become one that holds them
        if (!take(k)) return false;
        PickleValue v;
        v.nest = deepest(stack_.size() - k) + 1;
        stack_.resize(stack_.size() - k);
        return push(v);
    }
    bool refill(uint32_t items) {  // the container on top now holds values nested `items` deep
        PickleValue v;
        v.nest = std::max(stack_.back().nest, items + 1);
        stack_.pop_back();
        return push(v);
    }
    // Closes the open mark: the values above it are taken (into the container below it).
    bool close_mark(bool into, bool pairs) {
        if (marks_.empty()) return fail("it closes a mark it never opened" + where());
        marks_.pop_back();
        if (into && floor_ <= (marks_.empty() ? 0 : marks_.back()))
            return fail("it adds to a container below its mark, and there is none" + where());
        if (pairs && (stack_.size() - floor_) % 2 != 0)
            return fail("a dict with an odd number of keys and values" + where());
        return true;
    }
    // The values above the mark become one (a storage id when they are one).
    bool collect(bool storage_id) {
        PickleValue v;
        v.nest = deepest(floor_) + 1;
        const auto& s = stack_;
        const size_t f = floor_;
        if (storage_id && s.size() - f == 5 && s[f].kind == 'S' && s[f + 1].kind == 'g' &&
            (s[f + 2].kind == 's' || s[f + 2].kind == 'S') && s[f + 4].kind == 'i') {
            v.kind = 'p';
            v.at = s[f + 2].at, v.length = s[f + 2].length;
            v.item_size = s[f + 1].number;
            v.number = s[f + 4].number;
        }
        stack_.resize(floor_);
        return push(v);
    }

    bool apply(const PickleOpcode& op);
    bool push_number(const PickleOpcode& op);
    bool push_global();
    bool memo(const PickleOpcode& op);
    bool persistent_id();

    const std::string& p_;
    const std::string& records_;
    const RecordSize& record_size_;
    size_t i_ = 0;                     // the next byte
    size_t at_ = 0;                    // the current opcode's byte
    unsigned char op_ = 0;             // the current opcode
    size_t arg_ = 0, arg_length_ = 0;  // its argument
    size_t floor_ = 0;                 // the stack's size at the open mark
    bool stopped_ = false;
    std::vector<PickleValue> stack_;
    std::vector<size_t> marks_;  // the stack's size at each open MARK
    std::unordered_map<uint64_t, PickleValue> memo_;
    std::string problem_;
};

bool PickleWalk::apply(const PickleOpcode& op) {
    switch (op.effect) {
        case Fx::stop:
            if (stack_.empty()) return fail("it stops with nothing on its stack" + where());
            stopped_ = true;
            return true;
        case Fx::nothing:
            return true;
        case Fx::mark:
            marks_.push_back(stack_.size());
            return true;
        case Fx::push_int:
        case Fx::push_long:
            return push_number(op);
        case Fx::push_string: {
            PickleValue v;
            v.kind = p_.compare(arg_, arg_length_, "storage") == 0 ? 'S' : 's';
            v.at = arg_, v.length = arg_length_;
            return push(v);
        }
        case Fx::push_global:
            return push_global();
        case Fx::push_other:
            return push(PickleValue{});
        case Fx::memo_get:
        case Fx::memo_put:
            return memo(op);
        case Fx::take_one:
            return take(1);
        case Fx::pop:
            if (!take(1)) return false;
            stack_.pop_back();
            return true;
        case Fx::pop_mark:
            if (!close_mark(false, false)) return false;
            stack_.resize(floor_);
            return true;
        case Fx::dup:
            return take(1) && push(stack_.back());
        case Fx::persistent_id:
            return persistent_id();
        case Fx::combine:
            return combine(op.count);
        case Fx::append: {
            if (!take(2)) return false;
            const uint32_t item = stack_.back().nest;
            stack_.pop_back();
            return refill(item);
        }
        case Fx::set_item: {
            if (!take(3)) return false;
            const uint32_t item = deepest(stack_.size() - 2);
            stack_.resize(stack_.size() - 2);
            return refill(item);
        }
        case Fx::tuple:
            return close_mark(false, false) && collect(/*storage_id=*/true);
        case Fx::collect:
        case Fx::collect_pairs:
        case Fx::collect_object:
            if (!close_mark(false, op.effect == Fx::collect_pairs)) return false;
            if (op.effect == Fx::collect_object && stack_.size() == floor_)
                return fail("an object with no class" + where());
            return collect(/*storage_id=*/false);
        case Fx::add_items:
        case Fx::add_pairs: {
            if (!close_mark(true, op.effect == Fx::add_pairs)) return false;
            const uint32_t items = deepest(floor_);
            stack_.resize(floor_);
            return refill(items);
        }
    }
    return true;
}

// BININT1, BININT2, BININT (signed); LONG1 of 8 bytes, an int64 as LibTorch reads it.
bool PickleWalk::push_number(const PickleOpcode& op) {
    PickleValue v;
    if (op.effect == Fx::push_int || arg_length_ == 8) {
        v.kind = 'i';
        v.number = static_cast<int64_t>(little_endian_at(p_, arg_, static_cast<int>(arg_length_)));
        if (op.effect == Fx::push_int && arg_length_ == 4)
            v.number = static_cast<int32_t>(v.number);
    }
    return push(v);
}

// GLOBAL "module\nname\n": torch.<T>Storage is a storage type.
bool PickleWalk::push_global() {
    PickleValue v;
    const std::string text = p_.substr(arg_, arg_length_);
    const size_t nl = text.find('\n');
    if (nl != std::string::npos && text.compare(0, nl, "torch") == 0) {
        std::string name = text.substr(nl + 1);
        if (!name.empty() && name.back() == '\n') name.pop_back();
        if (const int64_t size = storage_item_size(name); size > 0) {
            v.kind = 'g';
            v.number = size;
        }
    }
    return push(v);
}

// BINGET, LONG_BINGET: a slot written before; BINPUT, LONG_BINPUT, MEMOIZE: at most one slot
// per byte of the pickle.
bool PickleWalk::memo(const PickleOpcode& op) {
    if (op.effect == Fx::memo_get) {
        const uint64_t slot = little_endian_at(p_, arg_, static_cast<int>(arg_length_));
        const auto it = memo_.find(slot);
        if (it == memo_.end())
            return fail("it reads memo slot " + std::to_string(slot) + " before writing it" +
                        where());
        return push(it->second);
    }
    const uint64_t slot = op.argument == Arg::none
                              ? memo_.size()
                              : little_endian_at(p_, arg_, static_cast<int>(arg_length_));
    if (slot > p_.size())
        return fail("a memo index of " + std::to_string(slot) + " in a pickle of " +
                    std::to_string(p_.size()) + " bytes");
    if (!take(1)) return false;
    memo_[slot] = stack_.back();
    return true;
}

// BINPERSID: a tensor's storage, whose element count its record must hold.
bool PickleWalk::persistent_id() {
    if (!take(1)) return false;
    const PickleValue id = stack_.back();
    if (id.kind != 'p') return fail("a tensor storage not named as PyTorch names them" + where());
    const std::string key = p_.substr(id.at, id.length);
    const auto size = record_size_(records_ + key);
    if (id.number < 0 || (size && static_cast<uint64_t>(id.number) > *size / id.item_size))
        return fail("a tensor storage of " + std::to_string(id.number) + " elements of " +
                    std::to_string(id.item_size) + " bytes where its record '" + key + "' holds " +
                    (size ? std::to_string(*size) : std::string("?")) + " bytes" + where());
    stack_.back() = PickleValue{};
    return true;
}

}  // namespace

const PickleOpcode* pickle_opcode(unsigned char code) {
    static const std::array<const PickleOpcode*, 256> table = [] {
        std::array<const PickleOpcode*, 256> t{};
        for (const auto& op : kPickleOpcodes) t[op.code] = &op;
        return t;
    }();
    return table[code];
}

std::string pickle_problem(const std::string& pickle, const std::string& records,
                           const RecordSize& record_size) {
    return PickleWalk(pickle, records, record_size).run();
}

}  // namespace liftlab
