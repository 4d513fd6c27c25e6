// ---- wrapper.py: cpp_fused_fill_lift_fresh_mul_sub_0 ----
#include "/tmp/long5/.asv/inductor-cache/vm-amd-epyc-8d7c4d/torch-2.7.0+cu126-13417947/avx2/default/pi/cpicxudqmdsjh5cm4klbtbrvy2cxwr7whxl3md2zzdjdf3orvfdf.h"
extern "C"  void kernel(const int32_t* in_ptr0,
                       int64_t* out_ptr0,
                       int32_t* out_ptr1)
{
    {
        #pragma GCC ivdep
        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(4L); x0+=static_cast<int64_t>(1L))
        {
            for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(3L); x1+=static_cast<int64_t>(8L))
            {
                {
                    if(C10_LIKELY(x1 >= static_cast<int64_t>(0L) && x1 < static_cast<int64_t>(1)))
                    {
                        for (int64_t x1_tail = static_cast<int64_t>(0L);x1_tail < static_cast<int64_t>(3L); x1_tail++)
                        {
                            auto tmp0 = static_cast<int64_t>(2);
                            out_ptr0[static_cast<int64_t>(2L + x1_tail + 8L*x0)] = tmp0;
                        }
                    }
                }
            }
        }
    }
    {
        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(64L); x0+=static_cast<int64_t>(8L))
        {
            {
                if(C10_LIKELY(x0 >= static_cast<int64_t>(0) && x0 < static_cast<int64_t>(64L)))
                {
                    auto tmp0 = at::vec::Vectorized<int32_t>::loadu(in_ptr0 + static_cast<int64_t>(x0), static_cast<int64_t>(8));
                    auto tmp1 = static_cast<int32_t>(2);
                    auto tmp2 = at::vec::Vectorized<int32_t>(tmp1);
                    auto tmp3 = tmp0 * tmp2;
                    auto tmp4 = static_cast<int32_t>(-4);
                    auto tmp5 = at::vec::Vectorized<int32_t>(tmp4);
                    auto tmp6 = tmp3 - tmp5;
                    tmp6.store(out_ptr1 + static_cast<int64_t>(x0), static_cast<int64_t>(8));
                }
            }
        }
    }
}
