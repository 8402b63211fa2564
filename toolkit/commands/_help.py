"""`mssdiag ... --help` when no standard stream is a terminal, as typer prints it: made by
scripts/help_cache.py at install (not in git); toolkit/commands/fast.py prints it only while
every file in STAMP is unchanged."""

ENCODING = 'utf-8'

STAMP = [('/root/.pyenv/versions/3.11.7/lib/python3.11/__future__.py', 5218, 1778312132000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/_collections_abc.py', 30193, 1778312132000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/_compat_pickle.py', 8761, 1778312132000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/_compression.py', 5681, 1778312132000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/_sitebuiltins.py', 3128, 1778312132000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/_weakrefset.py', 5893, 1778312132000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/abc.py', 6538, 1778312132000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/ast.py', 61444, 1778312132000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/bisect.py', 3135, 1778312132000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/bz2.py', 11847, 1778312132000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/codecs.py', 37150, 1778312132000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/collections/__init__.py', 52018, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/collections/abc.py', 119, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/colorsys.py', 4062, 1778312132000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/contextlib.py', 27414, 1778312132000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/copy.py', 8681, 1778312132000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/copyreg.py', 7677, 1778312132000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/dataclasses.py', 58299, 1778312132000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/datetime.py', 91832, 1778312132000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/decimal.py', 320, 1778312132000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/difflib.py', 83308, 1778312132000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/dis.py', 28906, 1778312132000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/encodings/__init__.py', 5884, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/encodings/aliases.py', 15677, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/encodings/ascii.py', 1248, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/encodings/utf_8.py', 1005, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/enum.py', 78966, 1778312132000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/fnmatch.py', 5999, 1778312132000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/fractions.py', 28667, 1778312132000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/functools.py', 38413, 1778312132000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/genericpath.py', 4975, 1778312132000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/gettext.py', 21320, 1778312132000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/heapq.py', 23024, 1778312132000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/html/__init__.py', 4775, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/html/entities.py', 75383, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/importlib/__init__.py', 6089, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/importlib/_abc.py', 1852, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/importlib/_bootstrap.py', 48223, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/importlib/_bootstrap_external.py', 68856, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/importlib/machinery.py', 880, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/importlib/util.py', 11487, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/inspect.py', 124246, 1778312132000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/io.py', 4320, 1778312132000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/ipaddress.py', 75075, 1778312132000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/json/__init__.py', 14020, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/json/decoder.py', 12473, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/json/encoder.py', 16080, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/json/scanner.py', 2425, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/keyword.py', 1061, 1778312132000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/lib-dynload/_bisect.cpython-311-x86_64-linux-gnu.so',
  56656,
  1778312129000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/lib-dynload/_bz2.cpython-311-x86_64-linux-gnu.so',
  80296,
  1778312130000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/lib-dynload/_datetime.cpython-311-x86_64-linux-gnu.so',
  564712,
  1778312131000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/lib-dynload/_decimal.cpython-311-x86_64-linux-gnu.so',
  1710864,
  1778312132000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/lib-dynload/_heapq.cpython-311-x86_64-linux-gnu.so',
  63208,
  1778312129000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/lib-dynload/_json.cpython-311-x86_64-linux-gnu.so',
  210208,
  1778312130000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/lib-dynload/_lzma.cpython-311-x86_64-linux-gnu.so',
  131160,
  1778312130000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/lib-dynload/_opcode.cpython-311-x86_64-linux-gnu.so',
  29296,
  1778312129000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/lib-dynload/_pickle.cpython-311-x86_64-linux-gnu.so',
  542424,
  1778312131000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/lib-dynload/_posixsubprocess.cpython-311-x86_64-linux-gnu.so',
  92440,
  1778312130000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/lib-dynload/_random.cpython-311-x86_64-linux-gnu.so',
  57024,
  1778312129000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/lib-dynload/_sha512.cpython-311-x86_64-linux-gnu.so',
  86576,
  1778312130000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/lib-dynload/_struct.cpython-311-x86_64-linux-gnu.so',
  187200,
  1778312130000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/lib-dynload/_typing.cpython-311-x86_64-linux-gnu.so',
  24104,
  1778312129000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/lib-dynload/_uuid.cpython-311-x86_64-linux-gnu.so',
  24688,
  1778312130000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/lib-dynload/array.cpython-311-x86_64-linux-gnu.so',
  221288,
  1778312130000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/lib-dynload/fcntl.cpython-311-x86_64-linux-gnu.so',
  52760,
  1778312129000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/lib-dynload/math.cpython-311-x86_64-linux-gnu.so',
  290856,
  1778312130000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/lib-dynload/select.cpython-311-x86_64-linux-gnu.so',
  103800,
  1778312130000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/lib-dynload/unicodedata.cpython-311-x86_64-linux-gnu.so',
  1251248,
  1778312130000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/lib-dynload/zlib.cpython-311-x86_64-linux-gnu.so',
  172736,
  1778312130000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/linecache.py', 5690, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/locale.py', 79095, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/logging/__init__.py', 80823, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/lzma.py', 13277, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/ntpath.py', 30222, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/numbers.py', 10348, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/opcode.py', 10447, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/operator.py', 10965, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/os.py', 39504, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/pathlib.py', 48566, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/pickle.py', 64949, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/platform.py', 42273, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/posixpath.py', 17013, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/pprint.py', 24489, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/random.py', 32162, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/re/__init__.py', 15889, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/re/_casefix.py', 5446, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/re/_compiler.py', 26089, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/re/_constants.py', 5930, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/re/_parser.py', 42420, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/reprlib.py', 5437, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/selectors.py', 19671, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/shutil.py', 55284, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/signal.py', 2438, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/site.py', 22648, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/stat.py', 5485, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/string.py', 11786, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/struct.py', 257, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/subprocess.py', 88448, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/textwrap.py', 19718, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/threading.py', 57988, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/token.py', 2386, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/tokenize.py', 26336, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/traceback.py', 40378, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/types.py', 10067, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/typing.py', 120077, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/urllib/__init__.py', 0, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/urllib/parse.py', 44075, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/uuid.py', 27597, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/warnings.py', 21025, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/weakref.py', 21513, 1778312133000000000),
 ('/root/.pyenv/versions/3.11.7/lib/python3.11/zipimport.py', 30897, 1778312133000000000),
 ('/work/main/.venv/lib/python3.11/site-packages/_distutils_hack/__init__.py', 6128, 1795816568749722307),
 ('/work/main/.venv/lib/python3.11/site-packages/annotated_doc/__init__.py', 52, 1795816578344813550),
 ('/work/main/.venv/lib/python3.11/site-packages/annotated_doc/main.py', 1075, 1795816578344903954),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/__init__.py', 114, 1795816578616992800),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/_punycode.py', 2373, 1795816578617155001),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/common/__init__.py', 0, 1795816578618750151),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/common/entities.py', 157, 1795816578618946313),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/common/html_blocks.py',
  986,
  1795816578619021385),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/common/html_re.py', 1085, 1795816578619153962),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/common/normalize_url.py',
  3148,
  1795816578619243945),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/common/utils.py', 9721, 1795816578619339828),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/helpers/__init__.py', 253, 1795816578619491002),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/helpers/parse_link_destination.py',
  1906,
  1795816578619565423),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/helpers/parse_link_label.py',
  1037,
  1795816578619633905),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/helpers/parse_link_title.py',
  2273,
  1795816578619702597),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/main.py', 13081, 1795816578617267879),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/parser_block.py', 4275, 1795816578617427235),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/parser_core.py', 1016, 1795816578617680732),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/parser_inline.py', 7580, 1795816578617792879),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/presets/__init__.py', 1583, 1795816578619799150),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/presets/commonmark.py',
  2869,
  1795816578619870947),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/presets/default.py', 1811, 1795816578619966118),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/presets/zero.py', 2113, 1795816578620101640),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/renderer.py', 11704, 1795816578618035249),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/ruler.py', 9780, 1795816578618189779),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_block/__init__.py',
  593,
  1795816578620363839),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_block/blockquote.py',
  11506,
  1795816578620475696),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_block/code.py', 860, 1795816578620636064),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_block/fence.py',
  4756,
  1795816578620718787),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_block/heading.py',
  1810,
  1795816578620793188),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_block/hr.py', 1227, 1795816578620859206),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_block/html_block.py',
  3495,
  1795816578620930902),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_block/lheading.py',
  2659,
  1795816578621000335),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_block/list.py',
  12202,
  1795816578621094365),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_block/paragraph.py',
  1853,
  1795816578621213913),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_block/reference.py',
  6983,
  1795816578621295885),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_block/state_block.py',
  8854,
  1795816578621419428),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_block/table.py',
  7690,
  1795816578621601839),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_core/__init__.py',
  394,
  1795816578621712744),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_core/block.py', 372, 1795816578621779664),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_core/inline.py', 325, 1795816578621840183),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_core/linkify.py',
  5141,
  1795816578621914193),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_core/normalize.py',
  403,
  1795816578621982114),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_core/replacements.py',
  3471,
  1795816578622059369),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_core/smartquotes.py',
  7443,
  1795816578622134831),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_core/state_core.py',
  570,
  1795816578622202242),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_core/text_join.py',
  2108,
  1795816578622271034),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_inline/__init__.py',
  696,
  1795816578622496349),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_inline/autolink.py',
  2065,
  1795816578622581786),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_inline/backticks.py',
  2425,
  1795816578622708914),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_inline/balance_pairs.py',
  4852,
  1795816578622793560),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_inline/emphasis.py',
  3123,
  1795816578622869784),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_inline/entity.py',
  1873,
  1795816578622934329),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_inline/escape.py',
  1659,
  1795816578623071203),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_inline/fragments_join.py',
  1984,
  1795816578623163009),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_inline/html_inline.py',
  2356,
  1795816578623320754),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_inline/image.py',
  4141,
  1795816578623402605),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_inline/link.py',
  4258,
  1795816578623523265),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_inline/linkify.py',
  1706,
  1795816578623608171),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_inline/newline.py',
  1296,
  1795816578623674119),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_inline/state_inline.py',
  8441,
  1795816578623840977),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_inline/strikethrough.py',
  5171,
  1795816578623972072),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/rules_inline/text.py', 564, 1795816578624044279),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/token.py', 6439, 1795816578618320944),
 ('/work/main/.venv/lib/python3.11/site-packages/markdown_it/utils.py', 6126, 1795816578618574260),
 ('/work/main/.venv/lib/python3.11/site-packages/mdurl/__init__.py', 547, 1795816578060512560),
 ('/work/main/.venv/lib/python3.11/site-packages/mdurl/_decode.py', 3004, 1795816578060603606),
 ('/work/main/.venv/lib/python3.11/site-packages/mdurl/_encode.py', 2602, 1795816578060681922),
 ('/work/main/.venv/lib/python3.11/site-packages/mdurl/_format.py', 626, 1795816578060750414),
 ('/work/main/.venv/lib/python3.11/site-packages/mdurl/_parse.py', 11374, 1795816578060852606),
 ('/work/main/.venv/lib/python3.11/site-packages/mdurl/_url.py', 284, 1795816578060983941),
 ('/work/main/.venv/lib/python3.11/site-packages/pygments/__init__.py', 2962, 1795816577224620723),
 ('/work/main/.venv/lib/python3.11/site-packages/pygments/filter.py', 1913, 1795816577225646527),
 ('/work/main/.venv/lib/python3.11/site-packages/pygments/filters/__init__.py', 40349, 1795816577229185507),
 ('/work/main/.venv/lib/python3.11/site-packages/pygments/lexer.py', 35155, 1795816577226219419),
 ('/work/main/.venv/lib/python3.11/site-packages/pygments/lexers/__init__.py', 12070, 1795816577233551124),
 ('/work/main/.venv/lib/python3.11/site-packages/pygments/lexers/_mapping.py', 71218, 1795816577238912592),
 ('/work/main/.venv/lib/python3.11/site-packages/pygments/modeline.py', 1008, 1795816577226525093),
 ('/work/main/.venv/lib/python3.11/site-packages/pygments/plugin.py', 1933, 1795816577226717539),
 ('/work/main/.venv/lib/python3.11/site-packages/pygments/regexopt.py', 3313, 1795816577226909644),
 ('/work/main/.venv/lib/python3.11/site-packages/pygments/style.py', 6479, 1795816577227598368),
 ('/work/main/.venv/lib/python3.11/site-packages/pygments/styles/__init__.py', 2009, 1795816577309254395),
 ('/work/main/.venv/lib/python3.11/site-packages/pygments/styles/_mapping.py', 3381, 1795816577309330458),
 ('/work/main/.venv/lib/python3.11/site-packages/pygments/token.py', 6229, 1795816577227868950),
 ('/work/main/.venv/lib/python3.11/site-packages/pygments/util.py', 10770, 1795816577228700686),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/__init__.py', 6131, 1795816578800040744),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/_emoji_codes.py', 140235, 1795816578800610971),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/_emoji_replace.py', 1067, 1795816578801033589),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/_export_format.py', 2128, 1795816578801110464),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/_extension.py', 241, 1795816578801176141),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/_fileno.py', 799, 1795816578801276600),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/_log_render.py', 3213, 1795816578801545971),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/_loop.py', 1236, 1795816578801613721),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/_null_file.py', 1394, 1795816578801680170),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/_palettes.py', 7063, 1795816578801754901),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/_pick.py', 423, 1795816578801823543),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/_ratio.py', 5325, 1795816578802018182),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/_stack.py', 351, 1795816578802356365),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/_unicode_data/__init__.py', 2631, 1795816578802541971),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/_unicode_data/_versions.py', 298, 1795816578802608269),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/_unicode_data/unicode17-0-0.py',
  16704,
  1795816578804169189),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/_wrap.py', 3404, 1795816578806192175),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/abc.py', 878, 1795816578806256170),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/align.py', 10726, 1795816578806346935),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/box.py', 10650, 1795816578806822252),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/cells.py', 12335, 1795816578806972054),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/color.py', 18211, 1795816578807180514),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/color_triplet.py', 1054, 1795816578807318950),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/columns.py', 7131, 1795816578807403155),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/console.py', 101361, 1795816578807712605),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/constrain.py', 1288, 1795816578808058269),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/containers.py', 5502, 1795816578808142384),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/control.py', 6475, 1795816578808308210),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/default_styles.py', 8401, 1795816578808417332),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/emoji.py', 2388, 1795816578808611170),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/errors.py', 642, 1795816578808673533),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/highlighter.py', 9729, 1795816578808966178),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/jupyter.py', 3228, 1795816578809167978),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/markdown.py', 26549, 1795816578809848669),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/markup.py', 8427, 1795816578810087084),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/measure.py', 5305, 1795816578810215274),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/padding.py', 4896, 1795816578810388972),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/pager.py', 828, 1795816578810503002),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/palette.py', 3288, 1795816578810580767),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/panel.py', 11157, 1795816578810726183),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/pretty.py', 36349, 1795816578810921694),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/protocol.py', 1348, 1795816578811760931),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/region.py', 166, 1795816578811858646),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/repr.py', 4436, 1795816578811933437),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/rule.py', 4590, 1795816578812012705),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/scope.py', 3239, 1795816578812093535),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/screen.py', 1579, 1795816578812161236),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/segment.py', 25740, 1795816578812371418),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/style.py', 27068, 1795816578812877160),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/styled.py', 1234, 1795816578813040933),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/syntax.py', 36305, 1795816578813278987),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/table.py', 40033, 1795816578813561236),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/terminal_theme.py', 3370, 1795816578813743017),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/text.py', 47655, 1795816578813925808),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/theme.py', 3780, 1795816578814136742),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/themes.py', 102, 1795816578814203781),
 ('/work/main/.venv/lib/python3.11/site-packages/rich/traceback.py', 37535, 1795816578814356408),
 ('/work/main/.venv/lib/python3.11/site-packages/shellingham/__init__.py', 635, 1795816575675985747),
 ('/work/main/.venv/lib/python3.11/site-packages/shellingham/_core.py', 300, 1795816575676188969),
 ('/work/main/.venv/lib/python3.11/site-packages/typer/__init__.py', 1399, 1795816579395398548),
 ('/work/main/.venv/lib/python3.11/site-packages/typer/_click/__init__.py', 392, 1795816579395970599),
 ('/work/main/.venv/lib/python3.11/site-packages/typer/_click/_compat.py', 16901, 1795816579396193400),
 ('/work/main/.venv/lib/python3.11/site-packages/typer/_click/_textwrap.py', 1235, 1795816579396620114),
 ('/work/main/.venv/lib/python3.11/site-packages/typer/_click/core.py', 35729, 1795816579396981641),
 ('/work/main/.venv/lib/python3.11/site-packages/typer/_click/decorators.py', 1700, 1795816579397174668),
 ('/work/main/.venv/lib/python3.11/site-packages/typer/_click/exceptions.py', 7376, 1795816579397306023),
 ('/work/main/.venv/lib/python3.11/site-packages/typer/_click/formatting.py', 8485, 1795816579397434214),
 ('/work/main/.venv/lib/python3.11/site-packages/typer/_click/globals.py', 1761, 1795816579397604927),
 ('/work/main/.venv/lib/python3.11/site-packages/typer/_click/parser.py', 16645, 1795816579397754910),
 ('/work/main/.venv/lib/python3.11/site-packages/typer/_click/shell_completion.py',
  9939,
  1795816579398006144),
 ('/work/main/.venv/lib/python3.11/site-packages/typer/_click/termui.py', 14075, 1795816579398169516),
 ('/work/main/.venv/lib/python3.11/site-packages/typer/_click/utils.py', 14812, 1795816579398350555),
 ('/work/main/.venv/lib/python3.11/site-packages/typer/_coercion.py', 9338, 1795816579398551474),
 ('/work/main/.venv/lib/python3.11/site-packages/typer/_completion_classes.py', 7836, 1795816579398734636),
 ('/work/main/.venv/lib/python3.11/site-packages/typer/_completion_shared.py', 9146, 1795816579398868996),
 ('/work/main/.venv/lib/python3.11/site-packages/typer/_display.py', 654, 1795816579398989064),
 ('/work/main/.venv/lib/python3.11/site-packages/typer/_param_types.py', 11682, 1795816579399184425),
 ('/work/main/.venv/lib/python3.11/site-packages/typer/_typing.py', 1781, 1795816579399329420),
 ('/work/main/.venv/lib/python3.11/site-packages/typer/colors.py', 430, 1795816579399575676),
 ('/work/main/.venv/lib/python3.11/site-packages/typer/completion.py', 4799, 1795816579399700522),
 ('/work/main/.venv/lib/python3.11/site-packages/typer/core.py', 46585, 1795816579399982711),
 ('/work/main/.venv/lib/python3.11/site-packages/typer/exceptions.py', 693, 1795816579400259452),
 ('/work/main/.venv/lib/python3.11/site-packages/typer/main.py', 60982, 1795816579400464226),
 ('/work/main/.venv/lib/python3.11/site-packages/typer/models.py', 18842, 1795816579400749050),
 ('/work/main/.venv/lib/python3.11/site-packages/typer/params.py', 50290, 1795816579400961115),
 ('/work/main/.venv/lib/python3.11/site-packages/typer/rich_utils.py', 25521, 1795816579401320589),
 ('/work/main/.venv/lib/python3.11/site-packages/typer/utils.py', 7599, 1795816579401640735),
 ('/work/main/parsers/__init__.py', 14112, 1795817097845489277),
 ('/work/main/parsers/_needs.py', 2912, 1795817097845921810),
 ('/work/main/parsers/aix.py', 2587, 1795817097846235856),
 ('/work/main/parsers/base.py', 7880, 1795817097846668609),
 ('/work/main/parsers/bsd.py', 4149, 1795817097847098298),
 ('/work/main/parsers/bsdstyle.py', 10981, 1795817107638404922),
 ('/work/main/parsers/cisco.py', 10224, 1795817097847987099),
 ('/work/main/parsers/ftx.py', 2183, 1795817097848363929),
 ('/work/main/parsers/hpux.py', 3229, 1795817097848685006),
 ('/work/main/parsers/huawei.py', 8300, 1795817097849095155),
 ('/work/main/parsers/linux.py', 24011, 1795817097849797209),
 ('/work/main/parsers/model.py', 6851, 1795817107637619725),
 ('/work/main/parsers/omniswitch.py', 6711, 1795817097850551820),
 ('/work/main/parsers/paste.py', 16040, 1795817091934449215),
 ('/work/main/parsers/record.py', 4823, 1795816530939269000),
 ('/work/main/parsers/shapes.py', 31376, 1795817107638072167),
 ('/work/main/parsers/silent.py', 3488, 1795817097851879103),
 ('/work/main/parsers/snmp.py', 10519, 1795817097852281491),
 ('/work/main/parsers/solaris.py', 9050, 1795817097852683007),
 ('/work/main/parsers/tcpos.py', 1867, 1795817097852966048),
 ('/work/main/parsers/text.py', 54755, 1795817097854156247),
 ('/work/main/parsers/vos.py', 4575, 1795817097854564413),
 ('/work/main/parsers/windows.py', 14909, 1795817097855127510),
 ('/work/main/toolkit/__init__.py', 258, 1795816530941927340),
 ('/work/main/toolkit/cli/__init__.py', 3281, 1795816530947683725),
 ('/work/main/toolkit/cli/audit.py', 17862, 1795816530948294312),
 ('/work/main/toolkit/cli/calc.py', 3251, 1795816530948294312),
 ('/work/main/toolkit/cli/capture.py', 6358, 1795816530948294312),
 ('/work/main/toolkit/cli/fleet.py', 19791, 1795816530948294312),
 ('/work/main/toolkit/cli/guard.py', 4537, 1795816530948294312),
 ('/work/main/toolkit/cli/lab.py', 4964, 1795816530948294312),
 ('/work/main/toolkit/cli/offline.py', 4340, 1795816530948294312),
 ('/work/main/toolkit/cli/probe.py', 10349, 1795816530948294312),
 ('/work/main/toolkit/cli/startup.py', 15327, 1795816530948294312),
 ('/work/main/toolkit/cli/triage.py', 4531, 1795816530948294312),
 ('/work/main/toolkit/commands/__init__.py', 4183, 1795816530948294312),
 ('/work/main/toolkit/commands/calc.py', 5060, 1795817097856142709),
 ('/work/main/toolkit/commands/offline.py', 7001, 1795817097856471337),
 ('/work/main/toolkit/commands/ports.py', 1667, 1795816530949271735),
 ('/work/main/toolkit/commands/triage.py', 3571, 1795816530949271735),
 ('/work/main/toolkit/hostfile.py', 9923, 1795817097857232408),
 ('/work/main/toolkit/output.py', 20620, 1795817091921888799),
 ('/work/main/toolkit/platforms/__init__.py', 2818, 1795817091925187982)]

HELP = {'': '                                                                                \n'
     ' Usage: mssdiag [OPTIONS] COMMAND [ARGS]...                                     \n'
     '                                                                                \n'
     ' Diagnose TCP MSS, path MTU and IP fragmentation problems.                      \n'
     '                                                                                \n'
     ' Offline: `mssdiag parse DUMP...` reads netstat -s dumps from any OS; `mssdiag  \n'
     ' diff DUMP...` shows how the reassembly and fragmentation counters grew.        \n'
     '                                                                                \n'
     '╭─ Options ────────────────────────────────────────────────────────────────────╮\n'
     '│ --version             -V      <bool>  Print the version and exit.            │\n'
     '│ --install-completion          <bool>  Install completion for the current     │\n'
     '│                                       shell.                                 │\n'
     '│ --show-completion             <bool>  Show completion for the current shell, │\n'
     '│                                       to copy it or customize the            │\n'
     '│                                       installation.                          │\n'
     '│ --help                -h      <bool>  Show this message and exit.            │\n'
     '╰──────────────────────────────────────────────────────────────────────────────╯\n'
     '╭─ Commands ───────────────────────────────────────────────────────────────────╮\n'
     '│ parse    Read netstat -s dumps and print their IP reassembly and             │\n'
     '│          fragmentation counters.                                             │\n'
     '│ diff     Show how the counters grew between consecutive snapshots of each    │\n'
     '│          host.                                                               │\n'
     '│ probe    Probe live hosts: path MTU with DF probes, black holes, and the MSS │\n'
     '│          advertised and used.                                                │\n'
     '│ triage   Triage hosts: findings (code, evidence, confidence) and the exact   │\n'
     '│          commands to fix them.                                               │\n'
     '│ capture  Per connection: the MSS each side advertised and the segments it    │\n'
     '│          really sent.                                                        │\n'
     '│ calc     TCP numbers: MSS from MTU, packets for a transfer, BDP and buffers, │\n'
     '│          Mathis bound.                                                       │\n'
     '│ lab      Build scenario networks (client, router, target) in network         │\n'
     '│          namespaces.                                                         │\n'
     "│ audit    Periodic audits: a history of every host's counters, probes and     │\n"
     '│          findings, change events, and Nagios/Icinga, Checkmk, Prometheus and │\n'
     '│          JSON Lines outputs (docs/audit.md).                                 │\n'
     "│ fleet    Fleet scale on Ansible: collect every host's IP statistics (no      │\n"
     '│          Python needed on them) and probe from several vantage points, into  │\n'
     '│          the audit store (docs/fleet.md).                                    │\n'
     '╰──────────────────────────────────────────────────────────────────────────────╯\n'
     '\n',
 'audit': '                                                                                \n'
          ' Usage: mssdiag audit [OPTIONS] COMMAND [ARGS]...                               \n'
          '                                                                                \n'
          " Periodic audits: a history of every host's counters, probes and findings,      \n"
          ' change events, and Nagios/Icinga, Checkmk, Prometheus and JSON Lines outputs   \n'
          ' (docs/audit.md).                                                               \n'
          '                                                                                \n'
          '╭─ Options ────────────────────────────────────────────────────────────────────╮\n'
          '│ --help  -h      <bool>  Show this message and exit.                          │\n'
          '╰──────────────────────────────────────────────────────────────────────────────╯\n'
          '╭─ Commands ───────────────────────────────────────────────────────────────────╮\n'
          '│ run      One cron-safe audit run: gather, store, judge, emit.                │\n'
          '│ report   Per host: events and the per-hour time series of the counters and   │\n'
          '│          the path MTU.                                                       │\n'
          "│ reparse  Re-read stored snapshots from their raw text with today's parsers   │\n"
          '│          (after a parser fix).                                               │\n'
          '╰──────────────────────────────────────────────────────────────────────────────╯\n'
          '\n',
 'audit reparse': '                                                                                \n'
                  ' Usage: mssdiag audit reparse [OPTIONS]                                         \n'
                  '                                                                                \n'
                  " Re-read stored snapshots from their raw text with today's parsers (after a     \n"
                  ' parser fix).                                                                   \n'
                  '                                                                                \n'
                  ' Counters, OS, format and warnings are replaced, the deltas recomputed and the  \n'
                  ' events                                                                         \n'
                  ' that derive from them judged again from the start; stale events and probes     \n'
                  ' stay.                                                                          \n'
                  '                                                                                \n'
                  ' Examples:                                                                      \n'
                  '                                                                                \n'
                  '   mssdiag audit reparse                                                        \n'
                  '                                                                                \n'
                  '   mssdiag audit reparse --all --host vos1                                      \n'
                  '                                                                                \n'
                  ' Exit status: 0 done; 1 the store cannot be used; 2 bad usage; 3 some snapshots \n'
                  ' could                                                                          \n'
                  ' not be read again (they keep their old values).                                \n'
                  '                                                                                \n'
                  '╭─ Options ────────────────────────────────────────────────────────────────────╮\n'
                  '│ --store          FILE      The SQLite store (as audit run).                  │\n'
                  '│ --all            <bool>    Re-read every snapshot, not only those an older   │\n'
                  '│                            parser read.                                      │\n'
                  '│ --host           NAME      Only this host (repeatable).                      │\n'
                  "│ --wait           DURATION  How long to wait for a run's lock. [default: 60s] │\n"
                  '│ --help   -h      <bool>    Show this message and exit.                       │\n'
                  '╰──────────────────────────────────────────────────────────────────────────────╯\n'
                  '\n',
 'audit report': '                                                                                \n'
                 ' Usage: mssdiag audit report [OPTIONS]                                          \n'
                 '                                                                                \n'
                 ' Per host: events and the per-hour time series of the counters and the path     \n'
                 ' MTU.                                                                           \n'
                 '                                                                                \n'
                 ' Examples:                                                                      \n'
                 '                                                                                \n'
                 '   mssdiag audit report --since 7d                                              \n'
                 '                                                                                \n'
                 '   mssdiag audit report --host web1 --format md                                 \n'
                 '                                                                                \n'
                 '   mssdiag audit report --since 30d --format html -o audit.html                 \n'
                 '                                                                                \n'
                 ' Exit status: 0 report written; 1 the store cannot be read; 2 bad usage.        \n'
                 '                                                                                \n'
                 '╭─ Options ────────────────────────────────────────────────────────────────────╮\n'
                 '│ --store           FILE           The SQLite store (as audit run).            │\n'
                 '│ --since           DURATION|TIME  From this long ago (7d, 12h) or this ISO    │\n'
                 '│                                  8601 time.                                  │\n'
                 '│                                  [default: 7d]                               │\n'
                 '│ --host            NAME           Only this host (repeatable).                │\n'
                 '│ --format  -f      <str>          table, json, md or html (charts).           │\n'
                 '│                                  [default: table]                            │\n'
                 '│ --json            <bool>         Same as --format json.                      │\n'
                 '│ --output  -o      FILE           Write here (atomically) instead of stdout.  │\n'
                 '│ --help    -h      <bool>         Show this message and exit.                 │\n'
                 '╰──────────────────────────────────────────────────────────────────────────────╯\n'
                 '\n',
 'audit run': '                                                                                \n'
              ' Usage: mssdiag audit run [OPTIONS] [PATH...]...                                \n'
              '                                                                                \n'
              ' One cron-safe audit run: gather, store, judge, emit.                           \n'
              '                                                                                \n'
              ' Reads dumps (a cron log of `date; netstat -s`, files from customers, a fleet   \n'
              ' directory                                                                      \n'
              " of `<host>--<UTC time>.txt` files with its index.jsonl), this host's counters  \n"
              ' (--local) and probes (saved `probe --json` files, live --probe), stores what   \n'
              ' is new                                                                         \n'
              " (running it twice stores nothing twice), computes each interval's increase per \n"
              ' hour                                                                           \n'
              ' the way `diff` does (a reboot is a reset, never a spike), and opens, updates   \n'
              ' and clears                                                                     \n'
              ' events against thresholds. With no input it judges what the store holds (stale \n'
              ' hosts).                                                                        \n'
              '                                                                                \n'
              ' Examples:                                                                      \n'
              '                                                                                \n'
              '   mssdiag audit run /var/log/netstat/ --prom-file                              \n'
              ' /var/lib/prometheus/node-exporter/mssdiag.prom                                 \n'
              '                                                                                \n'
              '   mssdiag audit run --local --nagios -w reasm_fails_per_h=1 -c                 \n'
              ' reasm_fails_per_h=10                                                           \n'
              '                                                                                \n'
              '   mssdiag audit run fleet/2026-03-03T0900Z/ --checkmk                          \n'
              '                                                                                \n'
              '   mssdiag audit run --probe 192.0.2.10 --port 23 --jsonl >> audit.jsonl        \n'
              '                                                                                \n'
              '   */15 * * * * mssdiag audit run --local --keep 90d --prom-file                \n'
              ' /var/lib/node_exporter/mssdiag.prom                                            \n'
              '                                                                                \n'
              ' Exit status without --nagios/--checkmk: 0 all OK; 1 nothing could be read, or  \n'
              ' the store                                                                      \n'
              ' or lock failed; 2 bad usage; 3 some inputs could not be read; 4 a host has an  \n'
              ' open                                                                           \n'
              ' warning or critical event. With --nagios/--checkmk: 0 OK, 1 WARNING, 2         \n'
              ' CRITICAL,                                                                      \n'
              ' 3 UNKNOWN (usage errors, internal errors, timeouts, an unusable store).        \n'
              '                                                                                \n'
              '╭─ Arguments ──────────────────────────────────────────────────────────────────╮\n'
              '│   PATH...      <list[str]>  Dump files, directories (a fleet directory with  │\n'
              '│                             index.jsonl too), saved `probe --json` files, or │\n'
              '│                             - for stdin.                                     │\n'
              '╰──────────────────────────────────────────────────────────────────────────────╯\n'
              '╭─ Options ────────────────────────────────────────────────────────────────────╮\n'
              "│ --local              <bool>        This host's own counters (Linux:          │\n"
              '│                                    /proc/net/snmp{,6} of the current network │\n'
              '│                                    namespace; elsewhere netstat -s).         │\n'
              '│ --probe              TARGET        Probe this live target (path MTU, black   │\n'
              '│                                    hole, MSS); repeatable or                 │\n'
              '│                                    comma-separated. Needs root for DF        │\n'
              '│                                    probes.                                   │\n'
              '│ --port       -p      N,...         TCP port(s) for the live MSS check.       │\n'
              '│ --send               TEXT          Sent to live ports that stay silent.      │\n'
              '│ --host               NAME          Every input is this host (with no input:  │\n'
              '│                                    judge only this host of the store).       │\n'
              '│ --store              FILE          The SQLite store (default $MSSDIAG_STORE, │\n'
              '│                                    else                                      │\n'
              '│                                    $XDG_STATE_HOME/mssdiag/audit.sqlite).    │\n'
              '│ --config             FILE          Thresholds and event states (TOML;        │\n'
              '│                                    default $MSSDIAG_AUDIT_CONFIG, else       │\n'
              '│                                    ~/.config/mssdiag/audit.toml).            │\n'
              '│ --warning    -w      METRIC=RANGE  Warning threshold for every host, e.g.    │\n'
              '│                                    reasm_fails_per_h=5 (monitoring-plugins   │\n'
              '│                                    range).                                   │\n'
              '│ --critical   -c      METRIC=RANGE  Critical threshold.                       │\n'
              '│ --nagios             <bool>        Nagios/Icinga plugin: one line with       │\n'
              '│                                    perfdata, exit 0-3.                       │\n'
              '│ --checkmk            <bool>        Checkmk local-check lines, one per host.  │\n'
              '│ --jsonl              <bool>        JSON Lines: new snapshots, probes,        │\n'
              '│                                    changed events, hosts.                    │\n'
              '│ --prom-file          PATH          Write a node_exporter textfile (*.prom),  │\n'
              '│                                    atomically.                               │\n'
              '│ --keep               DURATION      Forget history older than this, e.g. 90d  │\n'
              '│                                    (each host keeps its latest snapshot).    │\n'
              "│ --wait               DURATION      How long to wait for another run's lock.  │\n"
              '│                                    [default: 60s]                            │\n'
              '│ --timeout            DURATION      Give up after this long (default 50s with │\n'
              '│                                    --nagios/--checkmk, else none).           │\n'
              '│ --now                TIME          Judge as if it were this ISO 8601 time    │\n'
              '│                                    (replaying old dumps; tests).             │\n'
              '│ --quiet      -q      <bool>        No summary on a terminal.                 │\n'
              '│ --help       -h      <bool>        Show this message and exit.               │\n'
              '╰──────────────────────────────────────────────────────────────────────────────╯\n'
              '\n',
 'calc': '                                                                                \n'
         ' Usage: mssdiag calc [OPTIONS] COMMAND [ARGS]...                                \n'
         '                                                                                \n'
         ' TCP numbers: MSS from MTU, packets for a transfer, BDP and buffers, Mathis     \n'
         ' bound.                                                                         \n'
         '                                                                                \n'
         '╭─ Options ────────────────────────────────────────────────────────────────────╮\n'
         '│ --help  -h      <bool>  Show this message and exit.                          │\n'
         '╰──────────────────────────────────────────────────────────────────────────────╯\n'
         '╭─ Commands ───────────────────────────────────────────────────────────────────╮\n'
         '│ mss       MSS for an MTU after encapsulations, and the per-segment overhead. │\n'
         '│ transfer  Packets and bytes (both ways, ACKs included) for one transfer, as  │\n'
         '│           in Table 1 of Stratus "Tuning your MSS".                           │\n'
         '│ bdp       Bandwidth-delay product and TCP buffer sizes, with the Linux       │\n'
         '│           sysctl lines (as the "BDP and TCP buffer size" lab computes them). │\n'
         '│ mathis    Upper bound on one TCP flow: MSS/RTT x 1/sqrt(loss) (the Mathis    │\n'
         '│           bound).                                                            │\n'
         '╰──────────────────────────────────────────────────────────────────────────────╯\n'
         '\n',
 'calc bdp': '                                                                                \n'
             ' Usage: mssdiag calc bdp [OPTIONS]                                              \n'
             '                                                                                \n'
             ' Bandwidth-delay product and TCP buffer sizes, with the Linux sysctl lines (as  \n'
             ' the "BDP and TCP buffer size" lab computes them).                              \n'
             '                                                                                \n'
             ' Example: mssdiag calc bdp --bandwidth 10G --rtt 20ms                           \n'
             '                                                                                \n'
             '╭─ Options ────────────────────────────────────────────────────────────────────╮\n'
             '│ *  --bandwidth          <str>   Link rate: 100M, 10G, 1.5Gbit/s. [required]  │\n'
             '│ *  --rtt                <str>   Round-trip time: 20ms, 0.05s. [required]     │\n'
             '│    --factor             <int>   Buffer = factor x BDP (2 on Linux; 4 with    │\n'
             '│                                 BBR under loss).                             │\n'
             '│                                 [default: 2]                                 │\n'
             '│    --json               <bool>  Print one JSON object.                       │\n'
             '│    --help       -h      <bool>  Show this message and exit.                  │\n'
             '╰──────────────────────────────────────────────────────────────────────────────╯\n'
             '\n',
 'calc mathis': '                                                                                \n'
                ' Usage: mssdiag calc mathis [OPTIONS]                                           \n'
                '                                                                                \n'
                ' Upper bound on one TCP flow: MSS/RTT x 1/sqrt(loss) (the Mathis bound).        \n'
                '                                                                                \n'
                ' Example: mssdiag calc mathis --mss 1460 --rtt 50ms --loss 0.0001               \n'
                '                                                                                \n'
                '╭─ Options ────────────────────────────────────────────────────────────────────╮\n'
                '│ *  --mss           <str>   MSS in bytes. [required]                          │\n'
                '│ *  --rtt           <str>   Round-trip time: 50ms. [required]                 │\n'
                '│ *  --loss          <str>   Loss rate: 0.0001 or 0.01%. [required]            │\n'
                '│    --json          <bool>  Print one JSON object.                            │\n'
                '│    --help  -h      <bool>  Show this message and exit.                       │\n'
                '╰──────────────────────────────────────────────────────────────────────────────╯\n'
                '\n',
 'calc mss': '                                                                                \n'
             ' Usage: mssdiag calc mss [OPTIONS]                                              \n'
             '                                                                                \n'
             ' MSS for an MTU after encapsulations, and the per-segment overhead.             \n'
             '                                                                                \n'
             ' Example: mssdiag calc mss --mtu 1500 --encap pppoe,vlan                        \n'
             '                                                                                \n'
             '╭─ Options ────────────────────────────────────────────────────────────────────╮\n'
             "│ --mtu                  <str>   Carrier MTU in bytes (the link's IP MTU).     │\n"
             '│                                [default: 1500]                               │\n'
             '│ --encap                <str>   Encapsulations, outermost first: vlan, qinq,  │\n'
             '│                                pppoe, gre, udp, ipsec, vxlan, mpls (mpls:N   │\n'
             '│                                for N labels), comma separated.               │\n'
             '│ --family               <str>   ipv4 or ipv6. [default: ipv4]                 │\n'
             '│ --ip-options           <int>   IPv4 option bytes (multiple of 4).            │\n'
             '│                                [default: 0]                                  │\n'
             '│ --tcp-options          <int>   TCP option bytes per segment (timestamps:     │\n'
             '│                                12).                                          │\n'
             '│                                [default: 0]                                  │\n'
             '│ --json                 <bool>  Print one JSON object.                        │\n'
             '│ --help         -h      <bool>  Show this message and exit.                   │\n'
             '╰──────────────────────────────────────────────────────────────────────────────╯\n'
             '\n',
 'calc transfer': '                                                                                \n'
                  ' Usage: mssdiag calc transfer [OPTIONS]                                         \n'
                  '                                                                                \n'
                  ' Packets and bytes (both ways, ACKs included) for one transfer, as in Table 1   \n'
                  ' of Stratus "Tuning your MSS".                                                  \n'
                  '                                                                                \n'
                  ' Example: mssdiag calc transfer --size 1MB --mss 536,1460                       \n'
                  '                                                                                \n'
                  '╭─ Options ────────────────────────────────────────────────────────────────────╮\n'
                  '│    --size               <str>   Bytes to transfer: 1MB (10^6), 1MiB (2^20),  │\n'
                  '│                                 64k.                                         │\n'
                  '│                                 [default: 1MiB]                              │\n'
                  '│ *  --mss                <str>   MSS, or two to compare: 536,1460. [required] │\n'
                  '│    --ack-every          <int>   Receiver ACKs every N segments. [default: 2] │\n'
                  '│    --window             <str>   Sender window in bytes (odd last segment of  │\n'
                  '│                                 each window ACKed alone).                    │\n'
                  '│    --json               <bool>  Print one JSON object.                       │\n'
                  '│    --help       -h      <bool>  Show this message and exit.                  │\n'
                  '╰──────────────────────────────────────────────────────────────────────────────╯\n'
                  '\n',
 'capture': '                                                                                \n'
            ' Usage: mssdiag capture [OPTIONS] {FILE...}...                                  \n'
            '                                                                                \n'
            ' Per connection: the MSS each side advertised and the segments it really sent.  \n'
            '                                                                                \n'
            ' For every TCP connection: SYN and SYN-ACK MSS (or that it was absent), the     \n'
            ' largest                                                                        \n'
            " payload each way, segments above the peer's MSS (offload artefacts told apart  \n"
            ' by                                                                             \n'
            ' --mtu), the share of packets with DF, fragments, ICMP fragmentation-needed and \n'
            ' ICMPv6 Packet Too Big tied to the connection by the quoted header (and whether \n'
            ' the                                                                            \n'
            ' sender shrank after it), and retransmissions of maximum-size segments.         \n'
            ' Findings:                                                                      \n'
            ' legacy MSS (536, 512, 1220, none), small segments although both sides          \n'
            ' advertised                                                                     \n'
            " 1460 (VOS STCP's non-local rule), PTB obeyed or ignored, black-hole signature, \n"
            ' no                                                                             \n'
            ' DF plus fragments, and MSS clamping between two capture points (--second).     \n'
            '                                                                                \n'
            ' Examples:                                                                      \n'
            '                                                                                \n'
            '   mssdiag capture client.pcap                                                  \n'
            '                                                                                \n'
            '   mssdiag capture inside.pcapng --second outside.pcap --json                   \n'
            '                                                                                \n'
            '   mssdiag capture stcp_trace.txt --export-pcap stcp_trace.pcap                 \n'
            '                                                                                \n'
            ' Exit status: 0 every input read; 1 nothing could be read; 2 bad usage;         \n'
            ' 3 some inputs could not be read (or only in part; the rest is printed).        \n'
            '                                                                                \n'
            '╭─ Arguments ──────────────────────────────────────────────────────────────────╮\n'
            '│ *    FILE...      <list[str]>  pcap, pcapng, snoop or packet_monitor text    │\n'
            '│                                files (nettl, iptrace and Network Monitor     │\n'
            '│                                through editcap).                             │\n'
            '│                                [required]                                    │\n'
            '╰──────────────────────────────────────────────────────────────────────────────╯\n'
            '╭─ Options ────────────────────────────────────────────────────────────────────╮\n'
            '│ --second               FILE                       The same traffic captured  │\n'
            '│                                                   at another point           │\n'
            '│                                                   (repeatable): SYNs are     │\n'
            '│                                                   matched by ISN and IP ID,  │\n'
            '│                                                   through NAT, and their MSS │\n'
            '│                                                   compared.                  │\n'
            '│ --mtu                  <int range>                MTU of the capturing       │\n'
            "│                        [68<=x<=65535]             host's interface: larger   │\n"
            '│                                                   segments are offload       │\n'
            '│                                                   (TSO/GRO) artefacts, not   │\n'
            '│                                                   violations.                │\n'
            '│                                                   [default: 1500]            │\n'
            '│ --format       -f      FORMAT                     table, json (one object)   │\n'
            '│                                                   or jsonl (one record a     │\n'
            '│                                                   line).                     │\n'
            '│                                                   [default: table]           │\n'
            '│ --json                 <bool>                     Same as --format json.     │\n'
            '│ --quiet        -q      <bool>                     No progress bar, even on a │\n'
            '│                                                   terminal.                  │\n'
            '│ --export-pcap          OUT                        Write the packets of       │\n'
            '│                                                   packet_monitor traces,     │\n'
            '│                                                   rebuilt as IP/TCP, to a    │\n'
            '│                                                   pcap that Wireshark opens. │\n'
            '│ --help         -h      <bool>                     Show this message and      │\n'
            '│                                                   exit.                      │\n'
            '╰──────────────────────────────────────────────────────────────────────────────╯\n'
            '\n',
 'diff': '                                                                                \n'
         ' Usage: mssdiag diff [OPTIONS] {PATH...}...                                     \n'
         '                                                                                \n'
         ' Show how the counters grew between consecutive snapshots of each host.         \n'
         '                                                                                \n'
         ' Give two dumps (before, after, in any order) or one file holding several       \n'
         ' snapshots.                                                                     \n'
         ' Snapshots are grouped into hosts and put in time order as docs/hosts.md says:  \n'
         ' by the                                                                         \n'
         " prompt's host name, a host.toml, a file name like web1-0900.txt or --host;     \n"
         ' dumps                                                                          \n'
         ' naming no host pair when their counters grow together. For each pair:          \n'
         ' increases,                                                                     \n'
         ' rates per hour (when the dumps are dated), fragments per reassembled datagram  \n'
         ' and                                                                            \n'
         ' the share of reassemblies failing. A counter that went down is reported as an  \n'
         ' event, never as a negative number: `wrap` when a 32-bit counter rolled over    \n'
         ' (the                                                                           \n'
         ' increase is corrected), `reset` when the host rebooted (the increases across   \n'
         ' it are                                                                         \n'
         ' unknown).                                                                      \n'
         '                                                                                \n'
         ' Examples:                                                                      \n'
         '                                                                                \n'
         '   mssdiag diff before.txt after.txt                                            \n'
         '                                                                                \n'
         '   mssdiag diff cron-netstat.log --json                                         \n'
         '                                                                                \n'
         ' Exit status: 0 every input parsed; 1 nothing could be parsed; 2 bad usage;     \n'
         ' 3 some inputs could not be parsed (the others were, and their results are      \n'
         ' printed).                                                                      \n'
         '                                                                                \n'
         '╭─ Arguments ──────────────────────────────────────────────────────────────────╮\n'
         '│ *    PATH...      <list[str]>  Dump files, directories (read recursively) or │\n'
         '│                                - for stdin.                                  │\n'
         '│                                [required]                                    │\n'
         '╰──────────────────────────────────────────────────────────────────────────────╯\n'
         '╭─ Options ────────────────────────────────────────────────────────────────────╮\n'
         '│ --os              OS      Read every dump as this OS instead of detecting    │\n'
         '│                           it: aix, bsd, cisco, ftx, hpux, huawei, linux,     │\n'
         '│                           omniswitch, snmp, solaris, tcpos, vos, windows.    │\n'
         '│ --format  -f      FORMAT  table, json (one array) or jsonl (one object a     │\n'
         '│                           line).                                             │\n'
         '│                           [default: table]                                   │\n'
         '│ --json            <bool>  Same as --format json.                             │\n'
         '│ --quiet   -q      <bool>  No progress bar, even on a terminal.               │\n'
         '│ --host            NAME    Every dump given is this host (else the host comes │\n'
         '│                           from a host.toml, the prompt, or a file name like  │\n'
         '│                           web1-0900.txt; see docs/hosts.md).                 │\n'
         '│ --jobs    -j      N       Read files in N worker processes (0: one per CPU); │\n'
         '│                           the output is the same, in the same order. Worth   │\n'
         '│                           it for many files; one stream or one big file is   │\n'
         '│                           read on one core.                                  │\n'
         '│                           [default: 1]                                       │\n'
         '│ --help    -h      <bool>  Show this message and exit.                        │\n'
         '╰──────────────────────────────────────────────────────────────────────────────╯\n'
         '\n',
 'fleet': '                                                                                \n'
          ' Usage: mssdiag fleet [OPTIONS] COMMAND [ARGS]...                               \n'
          '                                                                                \n'
          " Fleet scale on Ansible: collect every host's IP statistics (no Python needed   \n"
          ' on them) and probe from several vantage points, into the audit store           \n'
          ' (docs/fleet.md).                                                               \n'
          '                                                                                \n'
          '╭─ Options ────────────────────────────────────────────────────────────────────╮\n'
          '│ --help  -h      <bool>  Show this message and exit.                          │\n'
          '╰──────────────────────────────────────────────────────────────────────────────╯\n'
          '╭─ Commands ───────────────────────────────────────────────────────────────────╮\n'
          "│ collect   Collect every host's IP statistics with Ansible and store them in  │\n"
          '│           the audit.                                                         │\n'
          '│ probe     Probe targets from several vantage hosts and store each path MTU   │\n'
          '│           per vantage -> target.                                             │\n'
          '│ playbook  Print a shipped playbook and the environment to run it by hand     │\n'
          '│           (AWX, Tower, cron).                                                │\n'
          '╰──────────────────────────────────────────────────────────────────────────────╯\n'
          '\n',
 'fleet collect': '                                                                                \n'
                  ' Usage: mssdiag fleet collect [OPTIONS]                                         \n'
                  '                                                                                \n'
                  " Collect every host's IP statistics with Ansible and store them in the audit.   \n"
                  '                                                                                \n'
                  ' Runs the shipped collect.yml (ansible.builtin.raw: SSH or WinRM, no Python on  \n'
                  ' the                                                                            \n'
                  " hosts; each host's command comes from its mssdiag_os variable: aix, bsd, ftx,  \n"
                  ' hpux,                                                                          \n'
                  ' linux, solaris, tcpos, vos, windows), then stores the files as `mssdiag audit  \n'
                  ' run                                                                            \n'
                  ' DIR` does. A host that fails or cannot be reached gets one stderr line and a   \n'
                  ' stale                                                                          \n'
                  ' event: silence never passes for health.                                        \n'
                  '                                                                                \n'
                  ' Examples:                                                                      \n'
                  '                                                                                \n'
                  '   mssdiag fleet collect -i inventory.yml                                       \n'
                  '                                                                                \n'
                  "   mssdiag fleet collect -i inventory.yml --limit 'legacy:!vos3' --forks 50     \n"
                  '                                                                                \n'
                  '   mssdiag fleet collect -i hosts.ini --dir /srv/mssdiag/fleet --ansible-args   \n'
                  " '-u audit --private-key ~/.ssh/audit'                                          \n"
                  '                                                                                \n'
                  '   */15 * * * * mssdiag fleet collect -i /etc/mssdiag/inventory.yml --forks 50  \n'
                  ' --prom-file /var/lib/node_exporter/mssdiag.prom                                \n'
                  '                                                                                \n'
                  ' Exit status: 0 every host stored and OK; 1 nothing collected (Ansible missing  \n'
                  ' or                                                                             \n'
                  ' failed, no host matched) or the store failed; 2 bad usage; 3 some hosts failed \n'
                  ' or                                                                             \n'
                  ' were unreachable (the others are stored); 4 a host has an open warning or      \n'
                  ' critical event.                                                                \n'
                  '                                                                                \n'
                  '╭─ Options ────────────────────────────────────────────────────────────────────╮\n'
                  '│ *  --inventory     -i      INVENTORY       Ansible inventory: a file, a      │\n'
                  '│                                            directory, or a comma-separated   │\n'
                  '│                                            host list (web1,web2,).           │\n'
                  '│                                            [required]                        │\n'
                  '│    --limit         -l      PATTERN         Only these hosts (an Ansible host │\n'
                  "│                                            pattern: web*, 'legacy:!vos3').   │\n"
                  "│    --forks         -f      N [1<=x<=1000]  Hosts at once (Ansible's forks;   │\n"
                  '│                                            default its own, 5).              │\n'
                  '│    --store                 FILE            The audit store (default          │\n'
                  '│                                            $MSSDIAG_STORE, else              │\n'
                  '│                                            $XDG_STATE_HOME/mssdiag/audit.sq… │\n'
                  '│    --config                FILE            Audit thresholds (as audit run).  │\n'
                  "│    --dir                   DIR             Keep each run's files in DIR/<UTC │\n"
                  '│                                            time>/ (default: a temporary      │\n'
                  '│                                            directory, removed once stored).  │\n'
                  "│    --timeout               S [x>=1]        Seconds each host's command may   │\n"
                  '│                                            take.                             │\n'
                  '│                                            [default: 120]                    │\n'
                  '│    --jsonl                 <bool>          JSON Lines of what was stored (as │\n'
                  '│                                            audit run --jsonl).               │\n'
                  '│    --prom-file             PATH            Write a node_exporter textfile.   │\n'
                  '│    --now                   TIME            Stamp the collection with this    │\n'
                  '│                                            ISO 8601 time instead of the      │\n'
                  '│                                            clock, and judge as of then       │\n'
                  '│                                            (replays, tests).                 │\n'
                  '│    --quiet         -q      <bool>          No progress and no summary on a   │\n'
                  '│                                            terminal.                         │\n'
                  '│    --ansible-args          ARGS            More ansible-playbook arguments,  │\n'
                  "│                                            as one string: --ansible-args '-u │\n"
                  "│                                            audit --private-key ~/.ssh/k'.    │\n"
                  '│    --help          -h      <bool>          Show this message and exit.       │\n'
                  '╰──────────────────────────────────────────────────────────────────────────────╯\n'
                  '\n',
 'fleet playbook': '                                                                                \n'
                   ' Usage: mssdiag fleet playbook [OPTIONS] [[collect|probe]]                      \n'
                   '                                                                                \n'
                   ' Print a shipped playbook and the environment to run it by hand (AWX, Tower,    \n'
                   ' cron).                                                                         \n'
                   '                                                                                \n'
                   ' The callback plugin (callback_plugins/ beside the playbook) is loaded by       \n'
                   ' Ansible on its                                                                 \n'
                   ' own and writes <dir>/<host>--<UTC time>.txt and index.jsonl into               \n'
                   ' $MSSDIAG_FLEET_DIR;                                                            \n'
                   ' `mssdiag audit run DIR` stores the directory.                                  \n'
                   '                                                                                \n'
                   ' Examples:                                                                      \n'
                   '                                                                                \n'
                   '   mssdiag fleet playbook > collect.yml                                         \n'
                   '                                                                                \n'
                   '   eval "$(mssdiag fleet playbook --env)"; ansible-playbook -i inventory.yml    \n'
                   ' "$MSSDIAG_PLAYBOOK"                                                            \n'
                   '                                                                                \n'
                   '   mssdiag fleet playbook --copy-to ~/awx-project/                              \n'
                   '                                                                                \n'
                   '╭─ Arguments ──────────────────────────────────────────────────────────────────╮\n'
                   '│   [collect|probe]      <str>  Which playbook. [default: collect]             │\n'
                   '╰──────────────────────────────────────────────────────────────────────────────╯\n'
                   '╭─ Options ────────────────────────────────────────────────────────────────────╮\n'
                   '│ --env              <bool>  Print only the environment, as shell lines        │\n'
                   '│                            (eval-able).                                      │\n'
                   '│ --copy-to          DIR     Copy the playbooks and the callback plugin into   │\n'
                   '│                            DIR (an AWX project, a cron controller).          │\n'
                   '│ --help     -h      <bool>  Show this message and exit.                       │\n'
                   '╰──────────────────────────────────────────────────────────────────────────────╯\n'
                   '\n',
 'fleet probe': '                                                                                \n'
                ' Usage: mssdiag fleet probe [OPTIONS] {TARGET...}...                            \n'
                '                                                                                \n'
                ' Probe targets from several vantage hosts and store each path MTU per vantage   \n'
                ' -> target.                                                                     \n'
                '                                                                                \n'
                ' Builds a wheel of this mssdiag, installs it on each vantage (Linux with Python \n'
                ' 3.9+;                                                                          \n'
                ' root for DF probes) with the shipped probe.yml, runs `mssdiag probe --json     \n'
                ' TARGET...`                                                                     \n'
                ' there and stores every result under its target, tagged with its vantage:       \n'
                ' `mssdiag                                                                       \n'
                ' audit report` shows the path MTU of each vantage -> target, so routes that     \n'
                ' fragment                                                                       \n'
                ' and routes that do not are told apart.                                         \n'
                '                                                                                \n'
                ' Examples:                                                                      \n'
                '                                                                                \n'
                '   mssdiag fleet probe -i inventory.yml --vantage probes 10.20.0.5              \n'
                ' vos1.example.net                                                               \n'
                '                                                                                \n'
                "   mssdiag fleet probe -i inventory.yml --vantage 'probes:&dc2' --port 23       \n"
                ' 10.20.0.5                                                                      \n'
                '                                                                                \n'
                '   mssdiag fleet probe -i inventory.yml --vantage probes --wheels /srv/wheels   \n'
                ' 10.20.0.5                                                                      \n'
                '                                                                                \n'
                ' Exit status: 0 every vantage probed and no open warning or critical event; 1   \n'
                ' no vantage                                                                     \n'
                ' could probe; 2 bad usage; 3 some vantages failed (the others are stored); 4 an \n'
                ' open                                                                           \n'
                ' warning or critical event (a black hole, a path MTU that changed).             \n'
                '                                                                                \n'
                '╭─ Arguments ──────────────────────────────────────────────────────────────────╮\n'
                '│ *    TARGET...      <list[str]>  Addresses or names every vantage probes.    │\n'
                '│                                  [required]                                  │\n'
                '╰──────────────────────────────────────────────────────────────────────────────╯\n'
                '╭─ Options ────────────────────────────────────────────────────────────────────╮\n'
                '│ *  --inventory     -i      INVENTORY       Ansible inventory: a file, a      │\n'
                '│                                            directory, or a comma-separated   │\n'
                '│                                            host list (web1,web2,).           │\n'
                '│                                            [required]                        │\n'
                '│ *  --vantage               GROUP           The vantage hosts: an inventory   │\n'
                '│                                            group or host pattern.            │\n'
                '│                                            [required]                        │\n'
                '│    --port          -p      N,...           TCP port(s) for the MSS check (as │\n'
                '│                                            mssdiag probe).                   │\n'
                '│    --limit         -l      PATTERN         Only these vantage hosts.         │\n'
                '│    --forks         -f      N [1<=x<=1000]  Vantages at once.                 │\n'
                "│    --wheels                DIR             Wheels of mssdiag's dependencies  │\n"
                '│                                            for vantages without a package    │\n'
                '│                                            index (pip download -d DIR ...).  │\n'
                '│    --venv                  PATH            Where mssdiag is installed on the │\n'
                '│                                            vantages (default /opt/mssdiag,   │\n'
                '│                                            or the mssdiag_venv variable).    │\n'
                '│    --no-install            <bool>          Use the mssdiag already on the    │\n'
                '│                                            vantages (mssdiag_bin, else       │\n'
                '│                                            <venv>/bin/mssdiag).              │\n'
                '│    --store                 FILE            The audit store (as audit run).   │\n'
                '│    --config                FILE            Audit thresholds (as audit run).  │\n'
                "│    --dir                   DIR             Keep each run's files in DIR/<UTC │\n"
                '│                                            time>/.                           │\n'
                "│    --timeout               S [x>=1]        Seconds each vantage's probe may  │\n"
                '│                                            take.                             │\n'
                '│                                            [default: 600]                    │\n'
                '│    --json                  <bool>          JSON Lines: each result with its  │\n'
                '│                                            vantage.                          │\n'
                '│    --now                   TIME            Stamp the results with this ISO   │\n'
                '│                                            8601 time.                        │\n'
                '│    --quiet         -q      <bool>          No progress and no table on a     │\n'
                '│                                            terminal.                         │\n'
                '│    --ansible-args          ARGS            More ansible-playbook arguments,  │\n'
                "│                                            as one string: --ansible-args '-u │\n"
                "│                                            audit --private-key ~/.ssh/k'.    │\n"
                '│    --help          -h      <bool>          Show this message and exit.       │\n'
                '╰──────────────────────────────────────────────────────────────────────────────╯\n'
                '\n',
 'lab': '                                                                                \n'
        ' Usage: mssdiag lab [OPTIONS] COMMAND [ARGS]...                                 \n'
        '                                                                                \n'
        ' Build scenario networks (client, router, target) in network namespaces.        \n'
        '                                                                                \n'
        ' Examples: mssdiag lab list; mssdiag lab up blackhole; mssdiag lab down         \n'
        ' mssd1a2b3c                                                                     \n'
        '                                                                                \n'
        '╭─ Options ────────────────────────────────────────────────────────────────────╮\n'
        '│ --help  -h      <bool>  Show this message and exit.                          │\n'
        '╰──────────────────────────────────────────────────────────────────────────────╯\n'
        '╭─ Commands ───────────────────────────────────────────────────────────────────╮\n'
        '│ list  The scenarios, and the labs that are up (exit 1 when the lab state     │\n'
        '│       cannot be read).                                                       │\n'
        '│ up    Build SCENARIO and leave it running (remove it with `mssdiag lab       │\n'
        '│       down`). Interrupted                                                    │\n'
        '│       (SIGINT, SIGTERM, SIGHUP), it removes what it had built.               │\n'
        '│ down  Remove a lab (or every lab recorded in the lab state). A lab whose     │\n'
        '│       state file is                                                          │\n'
        '│       damaged or lost is still removed by name, from its namespaces.         │\n'
        '╰──────────────────────────────────────────────────────────────────────────────╯\n'
        '\n',
 'lab down': '                                                                                \n'
             ' Usage: mssdiag lab down [OPTIONS] [[LAB]]                                      \n'
             '                                                                                \n'
             ' Remove a lab (or every lab recorded in the lab state). A lab whose state file  \n'
             ' is damaged or lost is still removed by name, from its namespaces.              \n'
             '                                                                                \n'
             '╭─ Arguments ──────────────────────────────────────────────────────────────────╮\n'
             '│   [LAB]      <str>  Lab name from `lab up`; all recorded labs when omitted.  │\n'
             '╰──────────────────────────────────────────────────────────────────────────────╯\n'
             '╭─ Options ────────────────────────────────────────────────────────────────────╮\n'
             '│ --help  -h      <bool>  Show this message and exit.                          │\n'
             '╰──────────────────────────────────────────────────────────────────────────────╯\n'
             '\n',
 'lab list': '                                                                                \n'
             ' Usage: mssdiag lab list [OPTIONS]                                              \n'
             '                                                                                \n'
             ' The scenarios, and the labs that are up (exit 1 when the lab state cannot be   \n'
             ' read).                                                                         \n'
             '                                                                                \n'
             '╭─ Options ────────────────────────────────────────────────────────────────────╮\n'
             '│ --json          <bool>  The labs as a JSON array.                            │\n'
             '│ --help  -h      <bool>  Show this message and exit.                          │\n'
             '╰──────────────────────────────────────────────────────────────────────────────╯\n'
             '\n',
 'lab up': '                                                                                \n'
           ' Usage: mssdiag lab up [OPTIONS] {SCENARIO}                                     \n'
           '                                                                                \n'
           ' Build SCENARIO and leave it running (remove it with `mssdiag lab down`).       \n'
           ' Interrupted (SIGINT, SIGTERM, SIGHUP), it removes what it had built.           \n'
           '                                                                                \n'
           '╭─ Arguments ──────────────────────────────────────────────────────────────────╮\n'
           '│ *    SCENARIO      <str>  [required]                                         │\n'
           '╰──────────────────────────────────────────────────────────────────────────────╯\n'
           '╭─ Options ────────────────────────────────────────────────────────────────────╮\n'
           '│ --json          <bool>  Print the lab description as JSON.                   │\n'
           '│ --help  -h      <bool>  Show this message and exit.                          │\n'
           '╰──────────────────────────────────────────────────────────────────────────────╯\n'
           '\n',
 'parse': '                                                                                \n'
          ' Usage: mssdiag parse [OPTIONS] {PATH...}...                                    \n'
          '                                                                                \n'
          ' Read netstat -s dumps and print their IP reassembly and fragmentation          \n'
          ' counters.                                                                      \n'
          '                                                                                \n'
          ' The OS and format are recognised from the text alone: prompts, `| grep frag`   \n'
          ' excerpts, e-mail quoting, CRLF and UTF-16 files all work. A file may hold many \n'
          ' snapshots (`date; netstat -s` appended by cron); each gets its date and the    \n'
          ' host it                                                                        \n'
          ' names (prompt, host.toml, a file name like web1-0900.txt, or --host).          \n'
          '                                                                                \n'
          ' Counters use IP-MIB names: ReasmReqds (fragments needing reassembly), ReasmOKs \n'
          ' (datagrams reassembled), ReasmFails, ReasmTimeout, FragOKs, FragFails,         \n'
          ' FragCreates.                                                                   \n'
          ' `-` means the OS never prints that counter (or the excerpt left it out).       \n'
          '                                                                                \n'
          ' Examples:                                                                      \n'
          '                                                                                \n'
          '   mssdiag parse dump.txt                                                       \n'
          '                                                                                \n'
          '   ssh host netstat -s | mssdiag parse - --json                                 \n'
          '                                                                                \n'
          '   mssdiag parse tickets/ --format jsonl > counters.jsonl                       \n'
          '                                                                                \n'
          '   mssdiag parse collected/ --jobs 0 --format jsonl > all.jsonl                 \n'
          '                                                                                \n'
          ' Exit status: 0 every input parsed; 1 nothing could be parsed; 2 bad usage;     \n'
          ' 3 some inputs could not be parsed (the others were, and their results are      \n'
          ' printed).                                                                      \n'
          '                                                                                \n'
          '╭─ Arguments ──────────────────────────────────────────────────────────────────╮\n'
          '│ *    PATH...      <list[str]>  Dump files, directories (read recursively) or │\n'
          '│                                - for stdin.                                  │\n'
          '│                                [required]                                    │\n'
          '╰──────────────────────────────────────────────────────────────────────────────╯\n'
          '╭─ Options ────────────────────────────────────────────────────────────────────╮\n'
          '│ --os              OS      Read every dump as this OS instead of detecting    │\n'
          '│                           it: aix, bsd, cisco, ftx, hpux, huawei, linux,     │\n'
          '│                           omniswitch, snmp, solaris, tcpos, vos, windows.    │\n'
          '│ --format  -f      FORMAT  table, json (one array) or jsonl (one object a     │\n'
          '│                           line).                                             │\n'
          '│                           [default: table]                                   │\n'
          '│ --json            <bool>  Same as --format json.                             │\n'
          '│ --quiet   -q      <bool>  No progress bar, even on a terminal.               │\n'
          '│ --host            NAME    Every dump given is this host (else the host comes │\n'
          '│                           from a host.toml, the prompt, or a file name like  │\n'
          '│                           web1-0900.txt; see docs/hosts.md).                 │\n'
          '│ --jobs    -j      N       Read files in N worker processes (0: one per CPU); │\n'
          '│                           the output is the same, in the same order. Worth   │\n'
          '│                           it for many files; one stream or one big file is   │\n'
          '│                           read on one core.                                  │\n'
          '│                           [default: 1]                                       │\n'
          '│ --help    -h      <bool>  Show this message and exit.                        │\n'
          '╰──────────────────────────────────────────────────────────────────────────────╯\n'
          '\n',
 'probe': '                                                                                \n'
          ' Usage: mssdiag probe [OPTIONS] {TARGET...}...                                  \n'
          '                                                                                \n'
          ' Probe live hosts: path MTU with DF probes, black holes, and the MSS advertised \n'
          ' and used.                                                                      \n'
          '                                                                                \n'
          ' Exit: 0 all targets answered, 1 none did (or stdout failed), 3 some did not, 2 \n'
          ' bad usage.                                                                     \n'
          '                                                                                \n'
          ' Examples:                                                                      \n'
          '                                                                                \n'
          '   mssdiag probe 192.0.2.10 --port 23                                           \n'
          '                                                                                \n'
          "   mssdiag probe web1 web2 --port 80 --send 'GET / HTTP/1.0\\r\\n\\r\\n' --json     \n"
          '                                                                                \n'
          '   mssdiag probe 10.1.2.3 --icmp-wait 10                                        \n'
          '                                                                                \n'
          '   mssdiag probe 10.1.2.3 --trace --port 23                                     \n'
          '                                                                                \n'
          '   mssdiag probe vos1 --port 21 --pmtud-check                                   \n'
          '                                                                                \n'
          '╭─ Arguments ──────────────────────────────────────────────────────────────────╮\n'
          '│ *    TARGET...      <list[str]>  Host names or addresses. [required]         │\n'
          '╰──────────────────────────────────────────────────────────────────────────────╯\n'
          '╭─ Options ────────────────────────────────────────────────────────────────────╮\n'
          '│ --port         -p      N,...   TCP port(s) for the MSS check: 21,25,80 or    │\n'
          '│                                20-23. Banner services talk first; use --send │\n'
          '│                                for others.                                   │\n'
          '│                -4      <bool>  IPv4 only.                                    │\n'
          '│                -6      <bool>  IPv6 only.                                    │\n'
          '│ --json                 <bool>  One JSON object per target, one a line.       │\n'
          '│ --rate                 PPS     Probes a second to any one target (bursts of  │\n'
          '│                                16; slower on its own when probes go          │\n'
          '│                                missing).                                     │\n'
          '│                                [default: 100.0]                              │\n'
          '│ --total-rate           PPS     Ceiling for the whole run, all targets        │\n'
          '│                                together.                                     │\n'
          '│                                [default: 20000.0]                            │\n'
          '│ --timeout              S       Longest wait for any one answer.              │\n'
          '│                                [default: 1.0]                                │\n'
          '│ --icmp-wait            S       Silence to wait for before calling a black    │\n'
          '│                                hole: a router that rate-limits its           │\n'
          "│                                'fragmentation needed' to fewer than one per  │\n"
          '│                                S seconds looks like one until then. Black    │\n'
          "│                                holes are 'high' confidence only with 10 or   │\n"
          '│                                more.                                         │\n'
          '│                                [default: 1.0]                                │\n'
          "│ --send                 TEXT    Sent to ports that stay silent, e.g. 'GET /   │\n"
          "│                                HTTP/1.0\\r\\n\\r\\n' (backslash escapes          │\n"
          '│                                understood).                                  │\n'
          '│ --trace                <bool>  Per hop: address, TTL, RTT and the MTU it     │\n'
          '│                                reported (a black hole bracketed between two  │\n'
          '│                                hops); as root also the hop after which our   │\n'
          "│                                SYN's MSS option changed (TTL-limited SYNs).  │\n"
          '│ --pmtud-check          <bool>  Root: does the target do PMTU discovery? A    │\n'
          '│                                real transfer from the first --port that      │\n'
          "│                                sends data, a forged 'fragmentation needed',  │\n"
          '│                                then what it resends (adds and always removes │\n'
          '│                                one iptables rule).                           │\n'
          '│ --no-raw               <bool>  Plain sockets only, as without root.          │\n'
          '│ --quiet        -q      <bool>  No progress bar, even on a terminal.          │\n'
          '│ --help         -h      <bool>  Show this message and exit.                   │\n'
          '╰──────────────────────────────────────────────────────────────────────────────╯\n'
          '\n',
 'triage': '                                                                                \n'
           ' Usage: mssdiag triage [OPTIONS] [PATH...]...                                   \n'
           '                                                                                \n'
           ' Triage hosts: findings (code, evidence, confidence) and the exact commands to  \n'
           ' fix them.                                                                      \n'
           '                                                                                \n'
           ' Evidence comes from netstat -s dumps (reassembly counters and how they grew    \n'
           ' between                                                                        \n'
           ' snapshots), saved probe results (path MTU, black holes, the MSS a host         \n'
           ' advertises                                                                     \n'
           ' and uses) and host facts (OS release, local or non-local peer, bandwidth, RTT, \n'
           ' loss). Flags apply to every host and override host files.                      \n'
           '                                                                                \n'
           ' Examples:                                                                      \n'
           '                                                                                \n'
           '   mssdiag triage fixtures/cases/demo/vos-host                                  \n'
           '                                                                                \n'
           '   mssdiag triage before.txt after.txt --os vos --release 14.6 --peer non-local \n'
           '                                                                                \n'
           '   mssdiag triage ticket-4711/ --host web1                                      \n'
           '                                                                                \n'
           '   mssdiag triage probe.json --bandwidth 10G --rtt 20ms --format md -o          \n'
           ' ticket.md                                                                      \n'
           '                                                                                \n'
           '   mssdiag triage cases/ --format html -o report.html                           \n'
           '                                                                                \n'
           '   mssdiag triage collected/ --jobs 0 --json -o fleet.json                      \n'
           '                                                                                \n'
           ' Exit status: 0 no problem found; 1 nothing could be read; 2 bad usage;         \n'
           ' 3 some inputs could not be read; 4 at least one finding of severity "problem". \n'
           '                                                                                \n'
           '╭─ Arguments ──────────────────────────────────────────────────────────────────╮\n'
           '│   PATH...      <list[str]>  netstat dumps, saved `probe --json` files, case  │\n'
           '│                             directories (with a host.toml) or host files     │\n'
           '│                             (*.toml).                                        │\n'
           '╰──────────────────────────────────────────────────────────────────────────────╯\n'
           '╭─ Options ────────────────────────────────────────────────────────────────────╮\n'
           '│ --target         -t      <list[str]>  Probe this live target too             │\n'
           '│                                       (repeatable; needs root for DF         │\n'
           '│                                       probes).                               │\n'
           '│ --probe-targets          <bool>       Also probe the targets host files list │\n'
           "│                                       (never without this flag: a customer's │\n"
           '│                                       file does not make mssdiag send        │\n'
           '│                                       packets).                              │\n'
           '│ --port           -p      N,...        TCP port(s) for the live MSS check (as │\n'
           '│                                       mssdiag probe).                        │\n'
           '│ --send                   TEXT         Sent to live ports that stay silent    │\n'
           '│                                       (backslash escapes understood).        │\n'
           '│ --icmp-wait              S            As mssdiag probe: seconds of silence   │\n'
           '│                                       before a black hole is called; 10      │\n'
           '│                                       makes it certain.                      │\n'
           '│ --hosts                  FILE         Host facts file (TOML, see             │\n'
           '│                                       docs/triage.md).                       │\n'
           '│ --host                   NAME         Every input given is this one host     │\n'
           '│                                       (else hosts come from host.toml,       │\n'
           '│                                       prompts, file names, counters:         │\n'
           '│                                       docs/hosts.md).                        │\n'
           "│ --os                     <str>        The host's platform, for advice: aix   │\n"
           '│                                       bsd ftx hpux linux solaris tcpos vos   │\n'
           '│                                       windows. Dumps are still read as what  │\n'
           "│                                       they are (a VOS host's TCP_OS dump).   │\n"
           "│ --release                <str>        OS release, e.g. 14.6 or 'Windows      │\n"
           "│                                       Server 2003'.                          │\n"
           '│ --peer                   <str>        local or non-local: is the peer on the │\n'
           "│                                       host's subnet?                         │\n"
           '│ --bandwidth              <str>        Link rate, e.g. 100M or 10G.           │\n'
           '│ --rtt                    <str>        Round-trip time, e.g. 20ms.            │\n'
           '│ --loss                   <str>        Loss rate, e.g. 0.0001 or 0.01%.       │\n'
           "│ --mtu                    <str>        The host's interface MTU.              │\n"
           '│ --format         -f      <str>        table, json, md (Markdown for tickets) │\n'
           '│                                       or html (one file).                    │\n'
           '│                                       [default: table]                       │\n'
           '│ --json                   <bool>       Same as --format json.                 │\n'
           '│ --output         -o      FILE         Write the report here instead of       │\n'
           '│                                       stdout.                                │\n'
           '│ --jobs           -j      N            Read dumps in N worker processes (0:   │\n'
           '│                                       one per CPU); the report is the same.  │\n'
           "│                                       Worth it for many hosts' files.        │\n"
           '│                                       [default: 1]                           │\n'
           '│ --help           -h      <bool>       Show this message and exit.            │\n'
           '╰──────────────────────────────────────────────────────────────────────────────╯\n'
           '\n'}
