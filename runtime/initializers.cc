// InitializeVariable and the Philox-driven distributions behind it.
#include "runtime/initializers.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "absl/strings/str_cat.h"
#include "graph/attr_reader.h"
#include "graph/status_macros.h"
#include "graph/tensor_block.h"
#include "kernels/reference/convert.h"
#include "kernels/reference/philox.h"

namespace tsr {

namespace {

using reference::Philox4x32_10;
using reference::PhiloxCounter;
using reference::PhiloxKey;

// SplitMix64's finalizer: spreads every input bit over the output.
uint64_t Mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The random stream of one variable: element i's a-th draw is the block at counter
// (i, a, name hash) under a key from the two seeds.
class VariableStream {
 public:
  VariableStream(uint64_t session_seed, uint64_t var_seed, uint64_t name_hash) : name_hash_(name_hash) {
    const uint64_t k = Mix64(session_seed ^ Mix64(var_seed ^ Mix64(name_hash)));
    key_ = {static_cast<uint32_t>(k), static_cast<uint32_t>(k >> 32)};
  }

  // Two independent uniforms in (0, 1) for element i, draw a (53-bit resolution).
  std::pair<double, double> Uniforms(int64_t i, uint32_t attempt) const {
    const uint64_t u = static_cast<uint64_t>(i);
    const PhiloxCounter c = Philox4x32_10(
        {static_cast<uint32_t>(u), static_cast<uint32_t>(u >> 32), attempt, static_cast<uint32_t>(name_hash_)}, key_);
    return {ToUnit(c[0], c[1]), ToUnit(c[2], c[3])};
  }

  // Standard normal for element i, draw a (Box-Muller).
  double Normal(int64_t i, uint32_t attempt) const {
    const auto [u1, u2] = Uniforms(i, attempt);
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }

  // Standard normal conditioned on |z| <= 2: redrawn until it lands there.
  double TruncatedNormal(int64_t i) const {
    for (uint32_t attempt = 0;; ++attempt) {
      const double z = Normal(i, attempt);
      if (std::abs(z) <= 2.0) return z;
    }
  }

 private:
  // (hi:lo) as a double in (0, 1): 53 random bits, offset by half a step to avoid 0 and 1.
  static double ToUnit(uint32_t lo, uint32_t hi) {
    const uint64_t bits = ((static_cast<uint64_t>(hi) << 32) | lo) >> 11;
    return (static_cast<double>(bits) + 0.5) * 0x1.0p-53;
  }

  uint64_t name_hash_;
  PhiloxKey key_;
};

// Standard deviation of the standard normal truncated to [-2, 2]: Keras divides by it
// so truncated variance-scaling initializers keep the intended variance.
constexpr double kTruncatedStddev = 0.87962566103423978;

// Writes value(i) for every element, converted to the tensor's dtype.
template <typename Fn>
void Fill(Tensor& t, Fn value) {
  VisitDType(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    T* out = t.data<T>();
    for (int64_t i = 0; i < t.num_elements(); ++i) out[i] = reference::FromDouble<T>(value(i));
  });
}

}  // namespace

std::pair<int64_t, int64_t> ComputeFans(const Shape& shape) {
  switch (shape.rank()) {
    case 0:
      return {1, 1};
    case 1:
      return {shape.dim(0), shape.dim(0)};
    case 2:
      return {shape.dim(0), shape.dim(1)};
    default: {
      int64_t receptive = 1;
      for (int i = 2; i < shape.rank(); ++i) receptive *= shape.dim(i);
      return {shape.dim(1) * receptive, shape.dim(0) * receptive};
    }
  }
}

absl::StatusOr<Tensor> InitializeVariable(const Node& node, uint64_t session_seed) {
  if (node.op() != "Variable" || node.op_def() == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("node '", node.name(), "' (", node.op(), ") is not a Variable"));
  }
  const AttrReader attrs(*node.op_def(), node.attrs());
  const auto error = [&](absl::string_view message) {
    return absl::InvalidArgumentError(absl::StrCat("variable '", node.name(), "': ", message));
  };
  const DType dtype = attrs.GetType("dtype");
  const Shape share = attrs.GetShape("shape");
  if (!IsValidDType(dtype)) return error("attribute 'dtype' is not a valid dtype");
  if (!share.is_static()) return error(absl::StrCat("shape ", share.ToString(), " must be static"));
  // A share of a split Variable: the whole is initialized, and the share is its block.
  Shape shape = share;
  std::vector<int64_t> offset(share.rank(), 0);
  if (node.FindAttr("partition_shape") != nullptr) {
    shape = attrs.GetShape("partition_shape");
    offset = attrs.GetInts("partition_offset");
    if (!shape.is_static() || static_cast<int>(offset.size()) != share.rank() || shape.rank() != share.rank()) {
      return error(absl::StrCat("partition_shape ", shape.ToString(), " and partition_offset do not describe a block ",
                                share.ToString()));
    }
  }
  const auto block = [&](Tensor whole) -> absl::StatusOr<Tensor> {
    if (shape == share) return whole;
    absl::StatusOr<Tensor> b = ExtractBlock(whole, offset, share);
    if (!b.ok()) return error(b.status().message());
    return b;
  };
  if (const Tensor* value = attrs.GetTensor("value"); value != nullptr && value->valid()) {
    if (value->dtype() != dtype || value->shape() != shape) {
      return error(absl::StrCat("attribute 'value' is ", value->type().ToString(), " but the variable is ",
                                TensorType(dtype, shape).ToString()));
    }
    return block(value->Clone());
  }
  TSR_ASSIGN_OR_RETURN(Tensor t, Tensor::Create(dtype, shape));
  const std::string init = attrs.GetString("initializer");
  // Random values are keyed by the name of the Variable they belong to.
  const AttrValue* partition_of = node.FindAttr("partition_of");
  const VariableStream stream(session_seed, static_cast<uint64_t>(attrs.GetInt("seed")),
                              StableHash64(partition_of != nullptr ? partition_of->s() : node.name()));
  const auto [fan_in, fan_out] = ComputeFans(shape);
  const auto uniform = [&](double lo, double hi) {
    Fill(t, [&](int64_t i) { return lo + (hi - lo) * stream.Uniforms(i, 0).first; });
  };
  const auto truncated = [&](double mean, double stddev) {
    Fill(t, [&](int64_t i) { return mean + stddev * stream.TruncatedNormal(i); });
  };
  if (init == "zeros") {
    // Tensor::Create zero-fills.
  } else if (init == "ones") {
    Fill(t, [](int64_t) { return 1.0; });
  } else if (init == "constant") {
    const double v = attrs.GetFloat("init_value");
    Fill(t, [v](int64_t) { return v; });
  } else if (init == "uniform") {
    uniform(attrs.GetFloat("init_min"), attrs.GetFloat("init_max"));
  } else if (init == "normal") {
    const double mean = attrs.GetFloat("init_mean");
    const double stddev = attrs.GetFloat("init_stddev");
    Fill(t, [&](int64_t i) { return mean + stddev * stream.Normal(i, 0); });
  } else if (init == "truncated_normal") {
    truncated(attrs.GetFloat("init_mean"), attrs.GetFloat("init_stddev"));
  } else if (init == "glorot_uniform" || init == "he_uniform") {
    const double fan = init == "he_uniform" ? fan_in : (fan_in + fan_out) / 2.0;
    const double limit = std::sqrt(3.0 * (init == "he_uniform" ? 2.0 : 1.0) / std::max(fan, 1.0));
    uniform(-limit, limit);
  } else if (init == "glorot_normal" || init == "he_normal") {
    const double fan = init == "he_normal" ? fan_in : (fan_in + fan_out) / 2.0;
    const double stddev = std::sqrt((init == "he_normal" ? 2.0 : 1.0) / std::max(fan, 1.0)) / kTruncatedStddev;
    truncated(0.0, stddev);
  } else {
    return error(absl::StrCat("unknown initializer '", init, "'"));
  }
  return block(std::move(t));
}

}  // namespace tsr
