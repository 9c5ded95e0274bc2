"""The OpenCL enumerations PyOpenCL exposes as classes (``mem_flags``, ``device_info``, ...).

Values are those of CL/cl.h, so code that stores or prints them behaves as
with PyOpenCL.  Each class has ``to_string(value)`` like PyOpenCL's.
"""
from __future__ import annotations


class _Enum:
    @classmethod
    def to_string(cls, value, default_format=None):
        for name, v in vars(cls).items():
            if not name.startswith("_") and isinstance(v, int) and v == value:
                return name
        if default_format is not None:
            return default_format % value
        raise ValueError(f"{cls.__name__}: no constant with value {value!r}")


class device_type(_Enum):
    DEFAULT = 1 << 0
    CPU = 1 << 1
    GPU = 1 << 2
    ACCELERATOR = 1 << 3
    CUSTOM = 1 << 4
    ALL = 0xFFFFFFFF


class mem_flags(_Enum):
    READ_WRITE = 1 << 0
    WRITE_ONLY = 1 << 1
    READ_ONLY = 1 << 2
    USE_HOST_PTR = 1 << 3
    ALLOC_HOST_PTR = 1 << 4
    COPY_HOST_PTR = 1 << 5
    HOST_WRITE_ONLY = 1 << 7
    HOST_READ_ONLY = 1 << 8
    HOST_NO_ACCESS = 1 << 9


class map_flags(_Enum):
    READ = 1 << 0
    WRITE = 1 << 1
    WRITE_INVALIDATE_REGION = 1 << 2


class command_queue_properties(_Enum):
    OUT_OF_ORDER_EXEC_MODE_ENABLE = 1 << 0
    PROFILING_ENABLE = 1 << 1


class command_execution_status(_Enum):
    COMPLETE = 0x0
    RUNNING = 0x1
    SUBMITTED = 0x2
    QUEUED = 0x3


class command_type(_Enum):
    NDRANGE_KERNEL = 0x11F0
    TASK = 0x11F1
    READ_BUFFER = 0x11F3
    WRITE_BUFFER = 0x11F4
    COPY_BUFFER = 0x11F5
    MAP_BUFFER = 0x11FB
    UNMAP_MEM_OBJECT = 0x11FD
    MARKER = 0x11FE
    FILL_BUFFER = 0x1207
    BARRIER = 0x1205


class platform_info(_Enum):
    PROFILE = 0x0900
    VERSION = 0x0901
    NAME = 0x0902
    VENDOR = 0x0903
    EXTENSIONS = 0x0904


class device_info(_Enum):
    """OpenCL 1.2's device queries, every one (cl.h's values)."""
    TYPE = 0x1000
    VENDOR_ID = 0x1001
    MAX_COMPUTE_UNITS = 0x1002
    MAX_WORK_ITEM_DIMENSIONS = 0x1003
    MAX_WORK_GROUP_SIZE = 0x1004
    MAX_WORK_ITEM_SIZES = 0x1005
    PREFERRED_VECTOR_WIDTH_CHAR = 0x1006
    PREFERRED_VECTOR_WIDTH_SHORT = 0x1007
    PREFERRED_VECTOR_WIDTH_INT = 0x1008
    PREFERRED_VECTOR_WIDTH_LONG = 0x1009
    PREFERRED_VECTOR_WIDTH_FLOAT = 0x100A
    PREFERRED_VECTOR_WIDTH_DOUBLE = 0x100B
    MAX_CLOCK_FREQUENCY = 0x100C
    ADDRESS_BITS = 0x100D
    MAX_READ_IMAGE_ARGS = 0x100E
    MAX_WRITE_IMAGE_ARGS = 0x100F
    MAX_MEM_ALLOC_SIZE = 0x1010
    IMAGE2D_MAX_WIDTH = 0x1011
    IMAGE2D_MAX_HEIGHT = 0x1012
    IMAGE3D_MAX_WIDTH = 0x1013
    IMAGE3D_MAX_HEIGHT = 0x1014
    IMAGE3D_MAX_DEPTH = 0x1015
    IMAGE_SUPPORT = 0x1016
    MAX_PARAMETER_SIZE = 0x1017
    MAX_SAMPLERS = 0x1018
    MEM_BASE_ADDR_ALIGN = 0x1019
    MIN_DATA_TYPE_ALIGN_SIZE = 0x101A
    SINGLE_FP_CONFIG = 0x101B
    GLOBAL_MEM_CACHE_TYPE = 0x101C
    GLOBAL_MEM_CACHELINE_SIZE = 0x101D
    GLOBAL_MEM_CACHE_SIZE = 0x101E
    GLOBAL_MEM_SIZE = 0x101F
    MAX_CONSTANT_BUFFER_SIZE = 0x1020
    MAX_CONSTANT_ARGS = 0x1021
    LOCAL_MEM_TYPE = 0x1022
    LOCAL_MEM_SIZE = 0x1023
    ERROR_CORRECTION_SUPPORT = 0x1024
    PROFILING_TIMER_RESOLUTION = 0x1025
    ENDIAN_LITTLE = 0x1026
    AVAILABLE = 0x1027
    COMPILER_AVAILABLE = 0x1028
    EXECUTION_CAPABILITIES = 0x1029
    QUEUE_PROPERTIES = 0x102A
    NAME = 0x102B
    VENDOR = 0x102C
    DRIVER_VERSION = 0x102D
    PROFILE = 0x102E
    VERSION = 0x102F
    EXTENSIONS = 0x1030
    PLATFORM = 0x1031
    DOUBLE_FP_CONFIG = 0x1032
    HALF_FP_CONFIG = 0x1033
    PREFERRED_VECTOR_WIDTH_HALF = 0x1034
    HOST_UNIFIED_MEMORY = 0x1035
    NATIVE_VECTOR_WIDTH_CHAR = 0x1036
    NATIVE_VECTOR_WIDTH_SHORT = 0x1037
    NATIVE_VECTOR_WIDTH_INT = 0x1038
    NATIVE_VECTOR_WIDTH_LONG = 0x1039
    NATIVE_VECTOR_WIDTH_FLOAT = 0x103A
    NATIVE_VECTOR_WIDTH_DOUBLE = 0x103B
    NATIVE_VECTOR_WIDTH_HALF = 0x103C
    OPENCL_C_VERSION = 0x103D
    LINKER_AVAILABLE = 0x103E
    BUILT_IN_KERNELS = 0x103F
    IMAGE_MAX_BUFFER_SIZE = 0x1040
    IMAGE_MAX_ARRAY_SIZE = 0x1041
    PARENT_DEVICE = 0x1042
    PARTITION_MAX_SUB_DEVICES = 0x1043
    PARTITION_PROPERTIES = 0x1044
    PARTITION_AFFINITY_DOMAIN = 0x1045
    PARTITION_TYPE = 0x1046
    REFERENCE_COUNT = 0x1047
    PREFERRED_INTEROP_USER_SYNC = 0x1048
    PRINTF_BUFFER_SIZE = 0x1049
    IMAGE_PITCH_ALIGNMENT = 0x104A
    IMAGE_BASE_ADDRESS_ALIGNMENT = 0x104B


class device_fp_config(_Enum):
    DENORM = 1 << 0
    INF_NAN = 1 << 1
    ROUND_TO_NEAREST = 1 << 2
    ROUND_TO_ZERO = 1 << 3
    ROUND_TO_INF = 1 << 4
    FMA = 1 << 5
    SOFT_FLOAT = 1 << 6
    CORRECTLY_ROUNDED_DIVIDE_SQRT = 1 << 7


class context_info(_Enum):
    REFERENCE_COUNT = 0x1080
    DEVICES = 0x1081
    PROPERTIES = 0x1082
    NUM_DEVICES = 0x1083


class command_queue_info(_Enum):
    CONTEXT = 0x1090
    DEVICE = 0x1091
    REFERENCE_COUNT = 0x1092
    PROPERTIES = 0x1093


class mem_info(_Enum):
    TYPE = 0x1100
    FLAGS = 0x1101
    SIZE = 0x1102
    HOST_PTR = 0x1103
    MAP_COUNT = 0x1104
    REFERENCE_COUNT = 0x1105
    CONTEXT = 0x1106
    ASSOCIATED_MEMOBJECT = 0x1107
    OFFSET = 0x1108


class mem_object_type(_Enum):
    BUFFER = 0x10F0
    IMAGE2D = 0x10F1
    IMAGE3D = 0x10F2
    IMAGE2D_ARRAY = 0x10F3
    IMAGE1D = 0x10F4
    IMAGE1D_ARRAY = 0x10F5
    IMAGE1D_BUFFER = 0x10F6
    PIPE = 0x10F7


class program_info(_Enum):
    REFERENCE_COUNT = 0x1160
    CONTEXT = 0x1161
    NUM_DEVICES = 0x1162
    DEVICES = 0x1163
    SOURCE = 0x1164
    BINARY_SIZES = 0x1165
    BINARIES = 0x1166
    NUM_KERNELS = 0x1167
    KERNEL_NAMES = 0x1168


class program_build_info(_Enum):
    STATUS = 0x1181
    OPTIONS = 0x1182
    LOG = 0x1183
    BINARY_TYPE = 0x1184


class build_status(_Enum):
    SUCCESS = 0
    NONE = -1
    ERROR = -2
    IN_PROGRESS = -3


class kernel_info(_Enum):
    FUNCTION_NAME = 0x1190
    NUM_ARGS = 0x1191
    REFERENCE_COUNT = 0x1192
    CONTEXT = 0x1193
    PROGRAM = 0x1194
    ATTRIBUTES = 0x1195


class kernel_arg_info(_Enum):
    ADDRESS_QUALIFIER = 0x1196
    ACCESS_QUALIFIER = 0x1197
    TYPE_NAME = 0x1198
    TYPE_QUALIFIER = 0x1199
    NAME = 0x119A


class kernel_arg_address_qualifier(_Enum):
    GLOBAL = 0x119B
    LOCAL = 0x119C
    CONSTANT = 0x119D
    PRIVATE = 0x119E


class kernel_work_group_info(_Enum):
    WORK_GROUP_SIZE = 0x11B0
    COMPILE_WORK_GROUP_SIZE = 0x11B1
    LOCAL_MEM_SIZE = 0x11B2
    PREFERRED_WORK_GROUP_SIZE_MULTIPLE = 0x11B3
    PRIVATE_MEM_SIZE = 0x11B4
    GLOBAL_WORK_SIZE = 0x11B5


class event_info(_Enum):
    COMMAND_QUEUE = 0x11D0
    COMMAND_TYPE = 0x11D1
    REFERENCE_COUNT = 0x11D2
    COMMAND_EXECUTION_STATUS = 0x11D3
    CONTEXT = 0x11D4


class profiling_info(_Enum):
    QUEUED = 0x1280
    SUBMIT = 0x1281
    START = 0x1282
    END = 0x1283
