// ---- wrapper.py: cpp_fused_add_unfold_backward_0 ----
#include "/tmp/long5/.asv/inductor-cache/vm-amd-epyc-8d7c4d/torch-2.7.0+cu126-13417947/avx2/default/pi/cpicxudqmdsjh5cm4klbtbrvy2cxwr7whxl3md2zzdjdf3orvfdf.h"
extern "C"  void kernel(const int64_t* in_ptr0,
                       int64_t* out_ptr0,
                       int64_t* out_ptr1,
                       int32_t* out_ptr2)
{
    {
        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(1048578L); x0+=static_cast<int64_t>(8L))
        {
            {
                if(C10_LIKELY(x0 >= static_cast<int64_t>(0) && x0 < static_cast<int64_t>(1048576L)))
                {
                    auto tmp0 = static_cast<int64_t>(0);
                    auto tmp1 = at::vec::VectorizedN<int64_t,2>(tmp0);
                    tmp1.store(out_ptr0 + static_cast<int64_t>(x0), static_cast<int64_t>(8));
                }
                if(C10_UNLIKELY(x0 >= static_cast<int64_t>(1048576L) && x0 < static_cast<int64_t>(1048578L)))
                {
                    for (int64_t x0_tail = static_cast<int64_t>(1048576L);x0_tail < static_cast<int64_t>(1048578L); x0_tail++)
                    {
                        auto tmp0 = static_cast<int64_t>(0);
                        out_ptr0[static_cast<int64_t>(x0_tail)] = tmp0;
                    }
                }
            }
        }
    }
    {
        #pragma GCC ivdep
        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(174763L); x0+=static_cast<int64_t>(1L))
        {
            #pragma GCC ivdep
            for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(2L); x1+=static_cast<int64_t>(1L))
            {
                {
                    {
                        auto tmp0 = in_ptr0[static_cast<int64_t>(5L*x1 + 6L*x0)];
                        auto tmp1 = decltype(tmp0)(tmp0 + tmp0);
                        out_ptr1[static_cast<int64_t>(x1 + 2L*x0)] = tmp1;
                    }
                }
            }
        }
    }
    {
        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(6L); x0+=static_cast<int64_t>(8L))
        {
            {
                if(C10_LIKELY(x0 >= static_cast<int64_t>(0L) && x0 < static_cast<int64_t>(6L)))
                {
                    for (int64_t x0_tail = static_cast<int64_t>(0L);x0_tail < static_cast<int64_t>(6L); x0_tail++)
                    {
                        auto tmp0 = x0_tail;
                        auto tmp1 = c10::convert<int32_t>(tmp0);
                        out_ptr2[static_cast<int64_t>(x0_tail)] = tmp1;
                    }
                }
            }
        }
    }
}

// ---- wrapper.py: cpp_fused_1 ----
#include "/tmp/long5/.asv/inductor-cache/vm-amd-epyc-8d7c4d/torch-2.7.0+cu126-13417947/avx2/default/pi/cpicxudqmdsjh5cm4klbtbrvy2cxwr7whxl3md2zzdjdf3orvfdf.h"
extern "C"  void kernel(const int64_t* in_ptr0,
                       int64_t* out_ptr0)
{
    {
        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(1048578L); x0+=static_cast<int64_t>(8L))
        {
            {
                if(C10_LIKELY(x0 >= static_cast<int64_t>(0) && x0 < static_cast<int64_t>(1048576L)))
                {
                    auto tmp0 = at::vec::VectorizedN<int64_t,2>::loadu(in_ptr0 + static_cast<int64_t>(x0), static_cast<int64_t>(8));
                    tmp0.store(out_ptr0 + static_cast<int64_t>(x0), static_cast<int64_t>(8));
                }
                if(C10_UNLIKELY(x0 >= static_cast<int64_t>(1048576L) && x0 < static_cast<int64_t>(1048578L)))
                {
                    for (int64_t x0_tail = static_cast<int64_t>(1048576L);x0_tail < static_cast<int64_t>(1048578L); x0_tail++)
                    {
                        auto tmp0 = in_ptr0[static_cast<int64_t>(x0_tail)];
                        out_ptr0[static_cast<int64_t>(x0_tail)] = tmp0;
                    }
                }
            }
        }
    }
}
