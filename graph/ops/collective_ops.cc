// Collective ops: the communication a partitioned graph does between the devices of a
// device mesh (partitioner/). Each names the mesh axes it communicates over
// (`mesh_axes`, in the mesh's axis order); the devices that differ only in those axes'
// coordinates take part, ranked by them. The partitioner inserts these ops; nobody
// writes them by hand, and the graphs a user builds never contain them.
//
//   AllReduce(X) -> Y       Y = X reduced (sum, mean, max, min) over the group.
//   AllGather(X) -> Y       Y = every member's X concatenated along `axis`, in rank
//                           order; `size` is Y's extent along it (members' X may differ
//                           there: uneven splits).
//   AllToAll(X) -> Y        a split moved between dimensions: X (this member's block,
//                           split along `concat_axis`) is cut along `split_axis` into one
//                           slice per member, each sent to its member; Y is the slices
//                           received concatenated along `concat_axis` (extent
//                           `concat_size`), this member's slice along `split_axis` (extent
//                           `split_size`). Slices follow the SplitBegin rule.
//   ReduceScatter(X) -> Y   Y = this member's slice along `axis` of X reduced over the
//                           group; slices follow the SplitBegin rule of
//                           runtime/collectives/collectives.h and `size` is this
//                           member's extent.
//
// They are Collective() (so stateful): never folded or deduplicated, and runtimes issue
// them in one order on every device (every member must issue the same collectives in the
// same order).
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/register_ops.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

constexpr DType kReducibleDTypes[] = {DType::kF32, DType::kF64, DType::kI32, DType::kI64};

absl::Status CheckMeshAxes(const InferenceContext& ctx) {
  const std::vector<std::string> axes = ctx.GetStrings("mesh_axes");
  if (axes.empty()) return ctx.Error("mesh_axes is empty; name at least one mesh axis");
  absl::flat_hash_set<std::string> seen;
  for (const std::string& axis : axes) {
    if (axis.empty()) return ctx.Error("mesh_axes holds an empty name");
    if (!seen.insert(axis).second) return ctx.Error(absl::StrCat("mesh_axes names '", axis, "' twice"));
  }
  return absl::OkStatus();
}

absl::Status CheckReduction(const InferenceContext& ctx) {
  const std::string reduction = ctx.GetString("reduction");
  if (reduction != "sum" && reduction != "mean" && reduction != "max" && reduction != "min") {
    return ctx.Error(absl::StrCat("reduction is '", reduction, "' but one of sum, mean, max, min is required"));
  }
  return absl::OkStatus();
}

// X's shape with dim `axis` set to the `size` attribute.
absl::Status InferResized(InferenceContext& ctx) {
  TSR_RETURN_IF_ERROR(CheckMeshAxes(ctx));
  const Shape& x = ctx.input_shape(0);
  if (x.rank() < 1) return ctx.Error("input 0 ('X') is a scalar; a tensor of rank >= 1 is required");
  int64_t axis = ctx.GetInt("axis");
  if (axis < -x.rank() || axis >= x.rank()) {
    return ctx.Error(absl::StrCat("axis ", axis, " is out of range for input 0 ('X') of shape ", x.ToString()));
  }
  if (axis < 0) axis += x.rank();
  const int64_t size = ctx.GetInt("size");
  if (size < 0) return ctx.Error(absl::StrCat("size is ", size, " but >= 0 is required"));
  Shape y = x;
  y.set_dim(static_cast<int>(axis), size);
  ctx.set_output(0, ctx.input_dtype(0), std::move(y));
  return absl::OkStatus();
}

absl::Status InferAllReduce(InferenceContext& ctx) {
  TSR_RETURN_IF_ERROR(CheckMeshAxes(ctx));
  TSR_RETURN_IF_ERROR(CheckReduction(ctx));
  return SameAsFirstInput(ctx);
}

absl::Status InferReduceScatter(InferenceContext& ctx) {
  TSR_RETURN_IF_ERROR(CheckReduction(ctx));
  return InferResized(ctx);
}

// X's shape with dim `concat_axis` set to `concat_size` and dim `split_axis` to
// `split_size`.
absl::Status InferAllToAll(InferenceContext& ctx) {
  TSR_RETURN_IF_ERROR(CheckMeshAxes(ctx));
  const Shape& x = ctx.input_shape(0);
  Shape y = x;
  int64_t axes[2] = {ctx.GetInt("split_axis"), ctx.GetInt("concat_axis")};
  const int64_t sizes[2] = {ctx.GetInt("split_size"), ctx.GetInt("concat_size")};
  const char* names[2] = {"split_axis", "concat_axis"};
  for (int k = 0; k < 2; ++k) {
    if (axes[k] < -x.rank() || axes[k] >= x.rank()) {
      return ctx.Error(
          absl::StrCat(names[k], " ", axes[k], " is out of range for input 0 ('X') of shape ", x.ToString()));
    }
    if (axes[k] < 0) axes[k] += x.rank();
    if (sizes[k] < 0) return ctx.Error(absl::StrCat(names[k], "'s size is ", sizes[k], " but >= 0 is required"));
    y.set_dim(static_cast<int>(axes[k]), sizes[k]);
  }
  if (axes[0] == axes[1]) return ctx.Error("split_axis and concat_axis are the same axis");
  ctx.set_output(0, ctx.input_dtype(0), std::move(y));
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterCollectiveOps(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("AllReduce")
                                            .Summary("X reduced element-wise over the devices of the mesh axes "
                                                     "'mesh_axes' (inserted by the partitioner).")
                                            .Input("X", "T")
                                            .Output("Y", "T")
                                            .TypeConstraint("T", kReducibleDTypes)
                                            .Attr("reduction", AttrType::kString, AttrValue::String("sum"))
                                            .RequiredAttr("mesh_axes", AttrType::kStrings)
                                            .Collective()
                                            .Infer(InferAllReduce)
                                            .Flops(PerOutputElement(1))
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("AllGather")
                                            .Summary("The X of every device of the mesh axes 'mesh_axes' "
                                                     "concatenated along 'axis' in rank order; 'size' is the result's "
                                                     "extent there (inserted by the partitioner).")
                                            .Input("X", "T")
                                            .Output("Y", "T")
                                            .TypeConstraint("T", kAllDTypes)
                                            .Attr("axis", AttrType::kInt, AttrValue::Int(0))
                                            .RequiredAttr("size", AttrType::kInt)
                                            .RequiredAttr("mesh_axes", AttrType::kStrings)
                                            .Collective()
                                            .Infer(InferResized)
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("ReduceScatter")
                                            .Summary("This device's slice along 'axis' (of extent 'size') of X "
                                                     "reduced over the devices of the mesh axes 'mesh_axes' (inserted "
                                                     "by the partitioner).")
                                            .Input("X", "T")
                                            .Output("Y", "T")
                                            .TypeConstraint("T", kReducibleDTypes)
                                            .Attr("reduction", AttrType::kString, AttrValue::String("sum"))
                                            .Attr("axis", AttrType::kInt, AttrValue::Int(0))
                                            .RequiredAttr("size", AttrType::kInt)
                                            .RequiredAttr("mesh_axes", AttrType::kStrings)
                                            .Collective()
                                            .Infer(InferReduceScatter)
                                            .Flops(PerOutputElement(1))
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("AllToAll")
                                            .Summary("X split along 'split_axis' into the devices of the mesh axes "
                                                     "'mesh_axes' (this device keeps its slice, of extent "
                                                     "'split_size'), gathered along 'concat_axis' (to extent "
                                                     "'concat_size'): a split moved from one dimension to another "
                                                     "(inserted by the partitioner).")
                                            .Input("X", "T")
                                            .Output("Y", "T")
                                            .TypeConstraint("T", kAllDTypes)
                                            .RequiredAttr("split_axis", AttrType::kInt)
                                            .RequiredAttr("split_size", AttrType::kInt)
                                            .RequiredAttr("concat_axis", AttrType::kInt)
                                            .RequiredAttr("concat_size", AttrType::kInt)
                                            .RequiredAttr("mesh_axes", AttrType::kStrings)
                                            .Collective()
                                            .Infer(InferAllToAll)
                                            .Build()));
  return absl::OkStatus();
}

}  // namespace tsr
