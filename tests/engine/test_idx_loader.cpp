// IDX reader and Fashion-MNIST loader, on small generated files (gzipped and plain), plus the real
// Debian files when installed. Every bad file gives a DataError naming the file and the problem.
#include <gtest/gtest.h>
#include <zlib.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/errors.h"
#include "data/idx_loader.h"
#include "test_helpers.h"

using liftlab::DataError;
using liftlab::test::TempDir;

namespace {

constexpr uint32_t kLabelsMagic = 0x00000801;
constexpr uint32_t kImagesMagic = 0x00000803;
constexpr uint32_t kSide = 28;

using liftlab::test::Bytes;

void put_big_endian32(Bytes& out, uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(v >> shift));
}

Bytes idx_file(uint32_t magic, const std::vector<uint32_t>& dims, const Bytes& data) {
    Bytes out;
    put_big_endian32(out, magic);
    for (uint32_t d : dims) put_big_endian32(out, d);
    out.insert(out.end(), data.begin(), data.end());
    return out;
}

// Known pixel values: image i, row r, column c holds (37 i + 5 r + c) mod 256.
Bytes image_data(uint32_t n) {
    Bytes out;
    for (uint32_t i = 0; i < n; ++i)
        for (uint32_t r = 0; r < kSide; ++r)
            for (uint32_t c = 0; c < kSide; ++c) out.push_back((37 * i + 5 * r + c) % 256);
    return out;
}

// Label of sample i: 3 i mod 10.
Bytes label_data(uint32_t n) {
    Bytes out;
    for (uint32_t i = 0; i < n; ++i) out.push_back((3 * i) % 10);
    return out;
}

std::string write_gz(const std::string& path, const Bytes& bytes) {
    gzFile f = gzopen(path.c_str(), "wb");
    EXPECT_NE(f, nullptr);
    EXPECT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())),
              static_cast<int>(bytes.size()));
    gzclose(f);
    return path;
}

std::string write_plain(const std::string& path, const Bytes& bytes) {
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
    return path;
}

Bytes read_plain(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

torch::Tensor expected_images(int64_t n) {
    Bytes b = image_data(static_cast<uint32_t>(n));
    return torch::from_blob(b.data(), {n, kSide, kSide}, torch::kUInt8).clone();
}

// A Fashion-MNIST-style folder with n_train / n_test samples, all four files gzipped.
void write_fashion_dir(const TempDir& dir, uint32_t n_train, uint32_t n_test) {
    write_gz(dir.file("train-images-idx3-ubyte.gz"),
             idx_file(kImagesMagic, {n_train, kSide, kSide}, image_data(n_train)));
    write_gz(dir.file("train-labels-idx1-ubyte.gz"),
             idx_file(kLabelsMagic, {n_train}, label_data(n_train)));
    write_gz(dir.file("t10k-images-idx3-ubyte.gz"),
             idx_file(kImagesMagic, {n_test, kSide, kSide}, image_data(n_test)));
    write_gz(dir.file("t10k-labels-idx1-ubyte.gz"),
             idx_file(kLabelsMagic, {n_test}, label_data(n_test)));
}

using liftlab::test::data_error;
using liftlab::test::has;
using liftlab::test::values;

}  // namespace

TEST(IdxLoader, ReadsGzippedImagesExactly) {
    TempDir dir;
    const auto path =
        write_gz(dir.file("imgs.gz"), idx_file(kImagesMagic, {5, kSide, kSide}, image_data(5)));
    const auto x = liftlab::read_idx(path);
    EXPECT_EQ(x.scalar_type(), torch::kUInt8);
    EXPECT_EQ(x.sizes(), (std::vector<int64_t>{5, kSide, kSide}));
    EXPECT_TRUE(torch::equal(x, expected_images(5)));
    // Spot check: image 4, row 27, column 3 holds (148 + 135 + 3) mod 256 = 30.
    EXPECT_EQ(x[4][27][3].item<int>(), 30);
}

TEST(IdxLoader, ReadsPlainUncompressedFiles) {
    TempDir dir;
    const auto path = write_plain(dir.file("labels"), idx_file(kLabelsMagic, {5}, label_data(5)));
    const auto y = liftlab::read_idx(path);
    EXPECT_EQ(y.sizes(), (std::vector<int64_t>{5}));
    EXPECT_EQ(values(y), (std::vector<int64_t>{0, 3, 6, 9, 2}));
}

TEST(IdxLoader, BadMagicIsNamed) {
    TempDir dir;
    const auto path = write_gz(dir.file("bad.gz"), idx_file(0x12345678, {1}, {7}));
    const auto e = data_error([&] { liftlab::read_idx(path); });
    EXPECT_EQ(e.file(), path);
    EXPECT_TRUE(has(e.what(), "bad magic number 0x12345678")) << e.what();
    EXPECT_TRUE(has(e.what(), path)) << e.what();
    // A float IDX file (type byte 0x0D) is well-formed IDX but not the unsigned-byte kind.
    const auto floats = write_plain(dir.file("floats"), idx_file(0x00000D01, {1}, {0, 0, 0, 0}));
    EXPECT_TRUE(has(data_error([&] { liftlab::read_idx(floats); }).what(), "bad magic number"));
}

TEST(IdxLoader, TruncatedDataIsNamed) {
    TempDir dir;
    Bytes data = image_data(5);
    data.resize(data.size() - 392);  // 4.5 images
    const auto path =
        write_gz(dir.file("short.gz"), idx_file(kImagesMagic, {5, kSide, kSide}, data));
    const auto e = data_error([&] { liftlab::read_idx(path); });
    EXPECT_EQ(e.file(), path);
    EXPECT_TRUE(has(e.what(), "truncated")) << e.what();
    EXPECT_TRUE(has(e.what(), "5 × 28 × 28 = 3920 bytes")) << e.what();
    EXPECT_TRUE(has(e.what(), "holds only 3528")) << e.what();
    // A header cut short is truncated too.
    const auto head = write_plain(dir.file("head"), {0, 0, 8, 3, 0, 0, 0, 5, 0});
    EXPECT_TRUE(has(data_error([&] { liftlab::read_idx(head); }).what(), "truncated"));
}

TEST(IdxLoader, CutGzipStreamIsAnError) {
    TempDir dir;
    // Pixels from a hash, so the compressed stream is long enough to cut in the middle.
    Bytes data(50 * kSide * kSide);
    for (size_t i = 0; i < data.size(); ++i)
        data[i] = static_cast<uint8_t>((i * 2654435761u) >> 13);
    const auto full =
        write_gz(dir.file("full.gz"), idx_file(kImagesMagic, {50, kSide, kSide}, data));
    Bytes gz = read_plain(full);
    gz.resize(gz.size() / 2);
    const auto cut = write_plain(dir.file("cut.gz"), gz);
    const auto e = data_error([&] { liftlab::read_idx(cut); });
    EXPECT_EQ(e.file(), cut);
    EXPECT_TRUE(has(e.what(), "truncated")) << e.what();
    EXPECT_TRUE(has(e.what(), "unexpected end of file")) << e.what();
}

TEST(IdxLoader, TrailingBytesAreAnError) {
    TempDir dir;
    const auto path = write_plain(dir.file("long"), idx_file(kLabelsMagic, {3}, label_data(4)));
    const auto e = data_error([&] { liftlab::read_idx(path); });
    EXPECT_TRUE(has(e.what(), "more bytes than the header promises")) << e.what();
}

TEST(IdxLoader, MissingAndEmptyFilesAreNamed) {
    TempDir dir;
    const auto missing = dir.file("nope.gz");
    const auto e = data_error([&] { liftlab::read_idx(missing); });
    EXPECT_EQ(e.file(), missing);
    EXPECT_TRUE(has(e.what(), "file not found")) << e.what();
    const auto empty = write_plain(dir.file("empty"), {});
    EXPECT_TRUE(has(data_error([&] { liftlab::read_idx(empty); }).what(), "file is empty"));
}

TEST(FashionMnistLoader, LoadsGeneratedFolder) {
    TempDir dir;
    write_fashion_dir(dir, /*n_train=*/5, /*n_test=*/3);
    const auto d = liftlab::load_fashion_mnist(dir.str());
    EXPECT_EQ(d.images_train.sizes(), (std::vector<int64_t>{5, 1, kSide, kSide}));
    EXPECT_EQ(d.images_test.sizes(), (std::vector<int64_t>{3, 1, kSide, kSide}));
    EXPECT_EQ(d.images_train.scalar_type(), torch::kFloat32);
    EXPECT_EQ(d.labels_train.scalar_type(), torch::kInt64);
    // Pixels are byte / 255, exactly as float32 computes it.
    const auto want = expected_images(5).unsqueeze(1).to(torch::kFloat32) / 255.0;
    EXPECT_TRUE(torch::equal(d.images_train, want));
    EXPECT_EQ(values(d.labels_train), (std::vector<int64_t>{0, 3, 6, 9, 2}));
    EXPECT_EQ(values(d.labels_test), (std::vector<int64_t>{0, 3, 6}));

    const auto few = liftlab::load_fashion_mnist(dir.str(), /*max_train=*/2, /*max_test=*/1);
    EXPECT_EQ(few.images_train.size(0), 2);
    EXPECT_EQ(few.labels_test.size(0), 1);
    EXPECT_TRUE(torch::equal(few.images_train, want.narrow(0, 0, 2)));
}

TEST(FashionMnistLoader, PlainFilesAreUsedWhenNoGzipIsThere) {
    TempDir dir;
    write_fashion_dir(dir, 5, 3);
    const auto gz = dir.file("train-labels-idx1-ubyte.gz");
    std::filesystem::remove(gz);
    write_plain(dir.file("train-labels-idx1-ubyte"), idx_file(kLabelsMagic, {5}, label_data(5)));
    EXPECT_EQ(liftlab::load_fashion_mnist(dir.str()).labels_train.size(0), 5);
}

TEST(FashionMnistLoader, CountMismatchIsNamed) {
    TempDir dir;
    write_fashion_dir(dir, 5, 3);
    const auto labels = write_gz(dir.file("train-labels-idx1-ubyte.gz"),
                                 idx_file(kLabelsMagic, {4}, label_data(4)));
    const auto e = data_error([&] { liftlab::load_fashion_mnist(dir.str()); });
    EXPECT_EQ(e.file(), labels);
    EXPECT_TRUE(has(e.what(), "count mismatch: holds 4 labels")) << e.what();
    EXPECT_TRUE(has(e.what(), "train-images-idx3-ubyte.gz holds 5 images")) << e.what();
}

TEST(FashionMnistLoader, MissingFileNamesTheDebianPackage) {
    TempDir dir;
    const auto e = data_error([&] { liftlab::load_fashion_mnist(dir.str()); });
    EXPECT_EQ(e.file(), dir.file("train-images-idx3-ubyte.gz"));
    EXPECT_TRUE(has(e.what(), "file not found")) << e.what();
    EXPECT_TRUE(has(e.what(), "dataset-fashion-mnist")) << e.what();
}

TEST(FashionMnistLoader, LabelOutOfRangeIsNamed) {
    TempDir dir;
    write_fashion_dir(dir, 5, 3);
    Bytes labels = label_data(3);
    labels[2] = 10;
    const auto path =
        write_gz(dir.file("t10k-labels-idx1-ubyte.gz"), idx_file(kLabelsMagic, {3}, labels));
    const auto e = data_error([&] { liftlab::load_fashion_mnist(dir.str()); });
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.line(), 3);
    EXPECT_TRUE(has(e.what(), "sample 3 has label 10, outside 0..9")) << e.what();
}

TEST(FashionMnistLoader, SwappedFilesAreNamed) {
    TempDir dir;
    write_fashion_dir(dir, 5, 3);
    const auto path = write_gz(dir.file("train-images-idx3-ubyte.gz"),
                               idx_file(kLabelsMagic, {5}, label_data(5)));
    const auto e = data_error([&] { liftlab::load_fashion_mnist(dir.str()); });
    EXPECT_EQ(e.file(), path);
    EXPECT_TRUE(has(e.what(), "expected an image file")) << e.what();
    EXPECT_TRUE(has(e.what(), "a label file?")) << e.what();
}

// The real data set from Debian's dataset-fashion-mnist, when installed.
TEST(FashionMnist, DebianFilesLoad) {
    const std::string dir = liftlab::kFashionMnistDir;
    if (!std::filesystem::exists(dir + "/train-images-idx3-ubyte.gz"))
        GTEST_SKIP() << "dataset-fashion-mnist is not installed (" << dir << ")";
    const auto start = std::chrono::steady_clock::now();
    const auto d = liftlab::load_fashion_mnist();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    RecordProperty("load_seconds", std::to_string(seconds));
    std::cout << "[ info     ] full Fashion-MNIST load: " << seconds << " s\n";

    EXPECT_EQ(d.images_train.sizes(), (std::vector<int64_t>{60000, 1, 28, 28}));
    EXPECT_EQ(d.images_test.sizes(), (std::vector<int64_t>{10000, 1, 28, 28}));
    EXPECT_EQ(d.labels_train.size(0), 60000);
    EXPECT_EQ(d.labels_test.size(0), 10000);
    // Balanced: 6000 training and 1000 test images per class.
    EXPECT_TRUE(
        torch::equal(torch::bincount(d.labels_train), torch::full({10}, 6000, torch::kInt64)));
    EXPECT_TRUE(
        torch::equal(torch::bincount(d.labels_test), torch::full({10}, 1000, torch::kInt64)));
    EXPECT_EQ(d.images_train.min().item<float>(), 0.0f);
    EXPECT_EQ(d.images_train.max().item<float>(), 1.0f);
    EXPECT_GE(d.images_test.min().item<float>(), 0.0f);
    EXPECT_LE(d.images_test.max().item<float>(), 1.0f);
}
