# AOT ID: ['91_inference']
from ctypes import c_void_p, c_long, c_int
import torch
import math
import random
import os
import tempfile
from math import inf, nan
from cmath import nanj
from torch._inductor.hooks import run_intermediate_hooks
from torch._inductor.utils import maybe_profile
from torch._inductor.codegen.memory_planning import _align as align
from torch import device, empty_strided
from torch._inductor.async_compile import AsyncCompile
from torch._inductor.select_algorithm import extern_kernels
from torch._inductor.codegen.multi_kernel import MultiKernelCall

aten = torch.ops.aten
inductor_ops = torch.ops.inductor
_quantized = torch.ops._quantized
assert_size_stride = torch._C._dynamo.guards.assert_size_stride
empty_strided_cpu = torch._C._dynamo.guards._empty_strided_cpu
empty_strided_cuda = torch._C._dynamo.guards._empty_strided_cuda
empty_strided_xpu = torch._C._dynamo.guards._empty_strided_xpu
reinterpret_tensor = torch._C._dynamo.guards._reinterpret_tensor
alloc_from_pool = torch.ops.inductor._alloc_from_pool
async_compile = AsyncCompile()
empty_strided_p2p = torch._C._distributed_c10d._SymmetricMemory.empty_strided_p2p


cpp_fused_add_div_index_index_add_pow_zeros_0 = async_compile.cpp_pybinding(['const int64_t*', 'const float*', 'float*', 'float*'], '''
#include "/tmp/long5/.asv/inductor-cache/vm-amd-epyc-8d7c4d/torch-2.7.0+cu126-13417947/avx2/default/pi/cpicxudqmdsjh5cm4klbtbrvy2cxwr7whxl3md2zzdjdf3orvfdf.h"
extern "C"  void kernel(const int64_t* in_ptr0,
                       const float* in_ptr1,
                       float* out_ptr0,
                       float* out_ptr1)
{
    {
        {
            {
                auto tmp0 = static_cast<float>(0.0);
                out_ptr0[static_cast<int64_t>(0L)] = tmp0;
            }
        }
    }
    {
        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(7L); x0+=static_cast<int64_t>(8L))
        {
            {
                if(C10_LIKELY(x0 >= static_cast<int64_t>(0L) && x0 < static_cast<int64_t>(7L)))
                {
                    for (int64_t x0_tail = static_cast<int64_t>(0L);x0_tail < static_cast<int64_t>(7L); x0_tail++)
                    {
                        auto tmp0 = in_ptr0[static_cast<int64_t>(x0_tail)];
                        auto tmp9 = in_ptr1[static_cast<int64_t>(x0_tail)];
                        auto tmp13 = out_ptr0[static_cast<int64_t>(0L)];
                        auto tmp1 = 1L;
                        auto tmp2 = c10::convert<int64_t>(tmp1);
                        auto tmp3 = decltype(tmp0)(tmp0 + tmp2);
                        auto tmp4 = tmp0 < 0;
                        auto tmp5 = tmp4 ? tmp3 : tmp0;
                        auto tmp6 = tmp5;
                        auto tmp7 = c10::convert<int64_t>(tmp6);
                        TORCH_CHECK((0 <= tmp7) & (tmp7 < 1L), "index out of bounds: 0 <= tmp7 < 1L");
                        auto tmp10 = decltype(tmp9)(tmp9 * tmp9);
                        auto tmp11 = static_cast<float>(1.0);
                        auto tmp12 = decltype(tmp10)(tmp10 + tmp11);
                        auto tmp14 = static_cast<float>(2.0);
                        auto tmp15 = decltype(tmp13)(tmp13 + tmp14);
                        auto tmp16 = tmp12 / tmp15;
                        out_ptr0[static_cast<int64_t>(0L)] += tmp12;
                        out_ptr1[static_cast<int64_t>(x0_tail)] = tmp16;
                    }
                }
            }
        }
    }
}
''')


async_compile.wait(globals())
del async_compile

def call(args):
    arg0_1, arg1_1 = args
    args.clear()
    assert_size_stride(arg0_1, (7, 1), (1, 1))
    assert_size_stride(arg1_1, (7, ), (1, ))
    buf0 = empty_strided_cpu((1, 1), (1, 1), torch.float32)
    buf2 = empty_strided_cpu((7, 1), (1, 1), torch.float32)
    cpp_fused_add_div_index_index_add_pow_zeros_0(arg1_1, arg0_1, buf0, buf2)
    del arg0_1
    del arg1_1
    return (buf2, )


def benchmark_compiled_module(times=10, repeat=10):
    from torch._dynamo.testing import rand_strided
    from torch._inductor.utils import print_performance
    arg0_1 = rand_strided((7, 1), (1, 1), device='cpu', dtype=torch.float32)
    arg1_1 = rand_strided((7, ), (1, ), device='cpu', dtype=torch.int64)
    fn = lambda: call([arg0_1, arg1_1])
    return print_performance(fn, times=times, repeat=repeat)


if __name__ == "__main__":
    from torch._inductor.wrapper_benchmark import compiled_module_main
    compiled_module_main('None', benchmark_compiled_module)
