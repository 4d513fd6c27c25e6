// ---- wrapper.py: cpp_fused_add_div_index_index_add_pow_zeros_0 ----
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
