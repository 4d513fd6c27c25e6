// ---- wrapper.py: cpp_fused_ones_where_0 ----
#include "/tmp/long5/.asv/inductor-cache/vm-amd-epyc-8d7c4d/torch-2.7.0+cu126-13417947/avx2/default/pi/cpicxudqmdsjh5cm4klbtbrvy2cxwr7whxl3md2zzdjdf3orvfdf.h"
extern "C"  void kernel(const float* in_ptr0,
                       const float* in_ptr1,
                       float* out_ptr2,
                       float* out_ptr3)
{
    {
        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(3L); x0+=static_cast<int64_t>(8L))
        {
            {
                if(C10_LIKELY(x0 >= static_cast<int64_t>(0L) && x0 < static_cast<int64_t>(3L)))
                {
                    for (int64_t x0_tail = static_cast<int64_t>(0L);x0_tail < static_cast<int64_t>(3L); x0_tail++)
                    {
                        auto tmp0 = in_ptr0[static_cast<int64_t>(x0_tail)];
                        auto tmp1 = in_ptr1[static_cast<int64_t>(x0_tail)];
                        auto tmp2 = static_cast<bool>(true);
                        auto tmp3 = tmp2 ? tmp0 : tmp1;
                        auto tmp4 = tmp2 ? tmp1 : tmp0;
                        out_ptr2[static_cast<int64_t>(x0_tail)] = tmp4;
                        out_ptr3[static_cast<int64_t>(x0_tail)] = tmp3;
                    }
                }
            }
        }
    }
}
