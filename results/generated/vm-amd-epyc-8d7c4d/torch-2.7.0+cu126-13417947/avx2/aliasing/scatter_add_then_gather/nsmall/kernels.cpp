// ---- wrapper.py: cpp_fused_index_select_scatter_add_zeros_0 ----
#include "/tmp/long5/.asv/inductor-cache/vm-amd-epyc-8d7c4d/torch-2.7.0+cu126-13417947/avx2/default/pi/cpicxudqmdsjh5cm4klbtbrvy2cxwr7whxl3md2zzdjdf3orvfdf.h"
extern "C"  void kernel(const int64_t* in_ptr0,
                       const float* in_ptr1,
                       float* out_ptr0,
                       float* out_ptr1)
{
    {
        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(4L); x0+=static_cast<int64_t>(8L))
        {
            {
                if(C10_LIKELY(x0 >= static_cast<int64_t>(0L) && x0 < static_cast<int64_t>(4L)))
                {
                    auto tmp0 = static_cast<float>(0.0);
                    auto tmp1 = at::vec::Vectorized<float>(tmp0);
                    tmp1.store(out_ptr0 + static_cast<int64_t>(x0), static_cast<int64_t>(4L));
                }
            }
        }
    }
    {
        #pragma GCC ivdep
        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(8L); x0+=static_cast<int64_t>(1L))
        {
            for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(4L); x1+=static_cast<int64_t>(8L))
            {
                {
                    if(C10_LIKELY(x1 >= static_cast<int64_t>(0L) && x1 < static_cast<int64_t>(1)))
                    {
                        for (int64_t x1_tail = static_cast<int64_t>(0L);x1_tail < static_cast<int64_t>(4L); x1_tail++)
                        {
                            auto tmp0 = in_ptr0[static_cast<int64_t>(x0)];
                            auto tmp4 = in_ptr1[static_cast<int64_t>(x1_tail + 4L*x0)];
                            auto tmp13 = out_ptr0[static_cast<int64_t>(x1_tail)];
                            auto tmp1 = tmp0;
                            auto tmp2 = c10::convert<int64_t>(tmp1);
                            TORCH_CHECK((0 <= tmp2) & (tmp2 < 1L), "index out of bounds: 0 <= tmp2 < 1L");
                            auto tmp5 = 1L;
                            auto tmp6 = c10::convert<int64_t>(tmp5);
                            auto tmp7 = decltype(tmp0)(tmp0 + tmp6);
                            auto tmp8 = tmp0 < 0;
                            auto tmp9 = tmp8 ? tmp7 : tmp0;
                            auto tmp10 = tmp9;
                            auto tmp11 = c10::convert<int64_t>(tmp10);
                            TORCH_CHECK((0 <= tmp11) & (tmp11 < 1L), "index out of bounds: 0 <= tmp11 < 1L");
                            out_ptr0[static_cast<int64_t>(x1_tail)] += tmp4;
                            out_ptr1[static_cast<int64_t>(x1_tail + 4L*x0)] = tmp13;
                        }
                    }
                }
            }
        }
    }
}
