#include "data/idx_loader.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "core/errors.h"

namespace liftlab {

namespace {

constexpr uint32_t kLabelsMagic = 0x00000801;      // 1-D: n labels
constexpr uint32_t kImagesMagic = 0x00000803;      // 3-D: n × rows × cols
constexpr unsigned char kUnsignedByteType = 0x08;  // third magic byte: element type uint8
constexpr int kMaxDims = 4;
// Larger than zlib's 8 KiB default buffer: fewer read calls on a 26 MB file.
constexpr unsigned kGzBufferBytes = 1u << 17;
// gzread takes an unsigned int length; read in slices well below that. Slices start small and
// double with what has arrived, so a short file whose header promises gigabytes costs what the
// file holds, not a 16 MB zero-filled slice (found by fuzz_idx: that fill was its whole time).
constexpr size_t kReadChunkBytes = size_t{16} << 20;
constexpr size_t kFirstChunkBytes = size_t{64} << 10;
// A header promising more than this is corrupt; the bound also keeps the size product exact.
constexpr uint64_t kMaxDataBytes = uint64_t{1} << 40;
// Up-front reservation cap, so a corrupt header cannot make us allocate before data arrives
// (the vector grows with the slices beyond it).
constexpr uint64_t kMaxReserveBytes = uint64_t{1} << 20;
constexpr int64_t kFashionClasses = FashionMnist::num_classes;
constexpr const char* kFashionPackageHint =
    " (Fashion-MNIST is installed by Debian's dataset-fashion-mnist package: "
    "apt install dataset-fashion-mnist; or pass the folder that holds the four *-ubyte.gz files)";

struct GzClose {
    void operator()(gzFile_s* f) const { gzclose(f); }
};
using GzHandle = std::unique_ptr<gzFile_s, GzClose>;

std::string hex32(uint32_t v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08x", v);
    return buf;
}

uint32_t big_endian32(const unsigned char* b) {
    return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | uint32_t{b[3]};
}

std::string shape_text(const std::vector<int64_t>& shape) {
    std::string s;
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? " × " : "") + std::to_string(shape[i]);
    return s;
}

GzHandle open_gz(const std::string& path, const std::string& missing_hint) {
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (!std::filesystem::exists(status)) throw DataError(path, 0, "file not found" + missing_hint);
    if (std::filesystem::is_directory(status))
        throw DataError(path, 0, "is a folder, not an IDX file");
    errno = 0;
    gzFile f = gzopen(path.c_str(), "rb");
    if (!f)
        throw DataError(path, 0,
                        std::string("cannot open file: ") +
                            (errno ? std::strerror(errno) : "zlib could not allocate its state"));
    gzbuffer(f, kGzBufferBytes);  // only valid before the first read
    return GzHandle(f);
}

// Appends up to `len` bytes to `out`; returns how many were read (fewer only at the end of the
// data). A corrupt gzip stream is an error; a stream that is cut short reads as end of data.
size_t read_some(gzFile f, const std::string& path, std::vector<unsigned char>& out, size_t len) {
    size_t total = 0;
    while (total < len) {
        const size_t chunk =
            std::min({len - total, kReadChunkBytes, std::max(kFirstChunkBytes, total)});
        const size_t old = out.size();
        out.resize(old + chunk);
        const int got = gzread(f, out.data() + old, static_cast<unsigned>(chunk));
        if (got < 0) {
            int errnum = Z_OK;
            const char* msg = gzerror(f, &errnum);
            throw DataError(path, 0, std::string("corrupt gzip data: ") + msg);
        }
        out.resize(old + static_cast<size_t>(got));
        total += static_cast<size_t>(got);
        if (static_cast<size_t>(got) < chunk) break;
    }
    return total;
}

// " (gzip stream: unexpected end of file)" when zlib saw the compressed stream end early.
std::string gzip_note(gzFile f) {
    int errnum = Z_OK;
    const char* msg = gzerror(f, &errnum);
    return errnum == Z_OK ? std::string() : std::string(" (gzip stream: ") + msg + ")";
}

struct IdxFile {
    uint32_t magic = 0;
    std::vector<int64_t> shape;  // as the header states it
    torch::Tensor data;          // uint8; dim 0 possibly cut to the requested item count
};

// Reads the header and the first `max_items` items (negative: all; then bytes after the promised
// data are an error too).
IdxFile read_idx_file(const std::string& path, int64_t max_items, const std::string& missing_hint) {
    GzHandle handle = open_gz(path, missing_hint);
    gzFile f = handle.get();

    std::vector<unsigned char> head;
    const size_t got_magic = read_some(f, path, head, 4);
    if (got_magic == 0) throw DataError(path, 0, "file is empty (expected an IDX header)");
    if (got_magic < 4)
        throw DataError(path, 0, "truncated: the file ends inside the 4-byte IDX magic number");
    IdxFile idx;
    idx.magic = big_endian32(head.data());
    const int ndims = head[3];
    if (head[0] != 0 || head[1] != 0 || head[2] != kUnsignedByteType || ndims < 1 ||
        ndims > kMaxDims)
        throw DataError(path, 0,
                        "bad magic number " + hex32(idx.magic) +
                            ": not an unsigned-byte IDX file (expected " + hex32(kLabelsMagic) +
                            " for labels or " + hex32(kImagesMagic) + " for images)");

    head.clear();
    if (read_some(f, path, head, 4 * static_cast<size_t>(ndims)) < 4 * static_cast<size_t>(ndims))
        throw DataError(path, 0,
                        "truncated: the file ends inside the IDX header (" + std::to_string(ndims) +
                            " dimension sizes expected)");
    uint64_t item_bytes = 1;
    uint64_t total_bytes = 1;
    // The product of the non-zero sizes is bounded before each multiplication (a wrapped uint64
    // product passed the old after-the-fact check), so a 0 anywhere in the shape cannot hide huge
    // other sizes: [0, 0, 0xfc000000, 0x95000000] made LibTorch's stride arithmetic overflow
    // and crash (found by fuzz_idx, as was [0, 0x0500ff31, 0x03050500, 0x01020305]).
    uint64_t nonzero_product = 1;
    for (int i = 0; i < ndims; ++i) {
        const uint32_t size = big_endian32(head.data() + 4 * i);
        idx.shape.push_back(size);
        const uint64_t factor = std::max<uint64_t>(size, 1);
        if (nonzero_product > kMaxDataBytes / factor)
            throw DataError(path, 0,
                            "header promises an implausible size (" + shape_text(idx.shape) +
                                " …): corrupt header?");
        nonzero_product *= factor;
        if (i > 0) item_bytes *= size;
        total_bytes *= size;
    }

    const int64_t items = idx.shape[0];
    const int64_t keep = max_items < 0 ? items : std::min(items, max_items);
    const uint64_t want = static_cast<uint64_t>(keep) * item_bytes;
    std::vector<unsigned char> bytes;
    bytes.reserve(std::min(want, kMaxReserveBytes));
    const size_t got = read_some(f, path, bytes, want);
    if (got < want)
        throw DataError(path, 0,
                        "truncated: the header promises " + shape_text(idx.shape) + " = " +
                            std::to_string(total_bytes) + " bytes of data, the file holds only " +
                            std::to_string(got) + gzip_note(f));
    if (keep == items) {
        std::vector<unsigned char> extra;
        if (read_some(f, path, extra, 1) > 0)
            throw DataError(path, 0,
                            "holds more bytes than the header promises (" + shape_text(idx.shape) +
                                " = " + std::to_string(total_bytes) +
                                "): wrong header or not an IDX file?");
        const std::string note = gzip_note(f);
        if (!note.empty()) throw DataError(path, 0, "damaged compressed file" + note);
    }

    std::vector<int64_t> shape = idx.shape;
    shape[0] = keep;
    idx.data = torch::from_blob(bytes.data(), shape, torch::kUInt8).clone();
    return idx;
}

// `dir/name.gz`, or `dir/name` when only the uncompressed file is there.
std::string locate(const std::string& dir, const std::string& name) {
    const std::filesystem::path base = std::filesystem::path(dir) / name;
    std::error_code ec;
    if (!std::filesystem::exists(base.string() + ".gz", ec) && std::filesystem::exists(base, ec))
        return base.string();
    return base.string() + ".gz";
}

struct Split {
    torch::Tensor images, labels;
};

Split load_split(const std::string& dir, const std::string& prefix, int64_t max_items) {
    const std::string images_path = locate(dir, prefix + "-images-idx3-ubyte");
    const std::string labels_path = locate(dir, prefix + "-labels-idx1-ubyte");
    IdxFile images = read_idx_file(images_path, max_items, kFashionPackageHint);
    if (images.magic != kImagesMagic)
        throw DataError(images_path, 0,
                        "expected an image file (magic " + hex32(kImagesMagic) +
                            ", n × rows × cols), found magic " + hex32(images.magic) +
                            (images.magic == kLabelsMagic ? " (a label file?)" : ""));
    IdxFile labels = read_idx_file(labels_path, max_items, kFashionPackageHint);
    if (labels.magic != kLabelsMagic)
        throw DataError(labels_path, 0,
                        "expected a label file (magic " + hex32(kLabelsMagic) + "), found magic " +
                            hex32(labels.magic) +
                            (labels.magic == kImagesMagic ? " (an image file?)" : ""));
    if (images.shape[0] != labels.shape[0])
        throw DataError(labels_path, 0,
                        "count mismatch: holds " + std::to_string(labels.shape[0]) +
                            " labels but " + images_path + " holds " +
                            std::to_string(images.shape[0]) + " images");

    if (images.shape[0] == 0)
        throw DataError(images_path, 0, "holds 0 images (the header's count is 0)");
    if (images.shape.size() != 3 || images.shape[1] == 0 || images.shape[2] == 0)
        throw DataError(images_path, 0,
                        "images must be rows × cols with both at least 1, the header says " +
                            shape_text(images.shape));

    Split split;
    split.labels = labels.data.to(torch::kInt64);
    const auto bad = (split.labels >= kFashionClasses).nonzero();
    if (bad.size(0) > 0) {
        const int64_t i = bad[0][0].item<int64_t>();
        throw DataError(labels_path, static_cast<int>(i + 1),
                        "sample " + std::to_string(i + 1) + " has label " +
                            std::to_string(split.labels[i].item<int64_t>()) + ", outside 0.." +
                            std::to_string(kFashionClasses - 1));
    }
    split.images = images.data.unsqueeze(1).to(torch::kFloat32).div_(255.0);
    return split;
}

}  // namespace

torch::Tensor read_idx(const std::string& path) {
    return read_idx_file(path, /*max_items=*/-1, /*missing_hint=*/"").data;
}

FashionMnist load_fashion_mnist(const std::string& dir, int64_t max_train, int64_t max_test) {
    Split train = load_split(dir, "train", max_train);
    Split test = load_split(dir, "t10k", max_test);
    if (train.images.size(2) != test.images.size(2) || train.images.size(3) != test.images.size(3))
        throw DataError(locate(dir, "t10k-images-idx3-ubyte"), 0,
                        "images are " + std::to_string(test.images.size(2)) + " × " +
                            std::to_string(test.images.size(3)) + ", the training images " +
                            std::to_string(train.images.size(2)) + " × " +
                            std::to_string(train.images.size(3)));
    FashionMnist d;
    d.images_train = std::move(train.images);
    d.labels_train = std::move(train.labels);
    d.images_test = std::move(test.images);
    d.labels_test = std::move(test.labels);
    return d;
}

}  // namespace liftlab
