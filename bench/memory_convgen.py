"""Generated long multi-session conversations with questions whose evidence is a few turns.

    from bench.memory_convgen import conversations
    for conv in conversations("en", "dev", 6): conv.messages, conv.questions

Two named friends talk over ~24 sessions days apart (≈ 20k tokens, ≈ 800 turns). Life events
unfold over several turns ("I just got back from Lisbon." … "We rented a houseboat near the old
harbour.") and some continue sessions later (a pet adopted, then its vet visit), while small talk
reuses the same vocabulary for other people, places and things. Questions:

* `single` — two or three turns of one event ("Where did Maya stay in Lisbon?");
* `multi_hop` — the entity is named by an attribute stated elsewhere ("What health problem did
  Maya's beagle have?" needs the adoption turn that says beagle and the vet turns that use the name);
* `multi_session` — the evidence is in several sessions ("Which cities did Tom visit?");
* `temporal` — the event is found by its date ("Where did Tom travel in March 2024?", "上个月",
  "去年十月"), relative phrases meant against the last message.

Speaker A is a `HumanMessage`, speaker B an `AIMessage`, both with `name`; every message has an
id and `created_at`. Deterministic: the same (language, seed) gives the same conversation.
The split is by seed: `dev` uses seeds 0.., `test` seeds 1000.. (never tune on `test`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

__all__ = ["Conversation", "Question", "conversation", "conversations"]

SPLIT_SEEDS = {"dev": 0, "test": 1000}


@dataclass
class Question:
    """A question and the ids of the messages that together answer it."""

    text: str
    evidence: list[str]
    kind: str


@dataclass
class Conversation:
    """One generated conversation: messages oldest first, and its questions."""

    lang: str
    seed: int
    messages: list[BaseMessage]
    questions: list[Question] = field(default_factory=list)
    version: int = 2


# -- vocabulary -----------------------------------------------------------------------------------
EN = {
    "names": [
        ("Maya", "Tom"),
        ("Priya", "Daniel"),
        ("Elena", "Marcus"),
        ("Sofia", "Kenji"),
        ("Hannah", "Omar"),
        ("Grace", "Lucas"),
        ("Nora", "Ethan"),
        ("Chloe", "Ravi"),
    ],
    "city": [
        "Lisbon",
        "Kyoto",
        "Reykjavik",
        "Marrakesh",
        "Vancouver",
        "Prague",
        "Cape Town",
        "Hanoi",
        "Edinburgh",
        "Buenos Aires",
        "Istanbul",
        "Seville",
        "Oslo",
        "Melbourne",
    ],
    "lodging": [
        "houseboat",
        "tiny cabin",
        "family-run guesthouse",
        "treehouse",
        "converted lighthouse",
        "rooftop apartment",
        "farm stay",
        "hostel dorm",
    ],
    "landmark": [
        "old harbour",
        "botanical garden",
        "cathedral",
        "night market",
        "river bend",
        "hot springs",
        "castle walls",
        "fish market",
    ],
    "food": [
        "grilled sardines",
        "ramen with black garlic",
        "lamb tagine",
        "smoked salmon",
        "custard tarts",
        "street dumplings",
        "seafood paella",
        "cardamom buns",
    ],
    "pet": [
        ("dog", "beagle"),
        ("dog", "corgi"),
        ("cat", "Maine Coon"),
        ("dog", "border collie"),
        ("cat", "Siamese"),
        ("rabbit", "lop-eared rabbit"),
        ("dog", "dachshund"),
    ],
    "petname": ["Biscuit", "Pepper", "Mochi", "Juniper", "Waffles", "Pixel", "Clementine", "Ziggy"],
    "illness": [
        "an ear infection",
        "a sprained paw",
        "a stomach bug from eating a sock",
        "an allergy to chicken",
        "a cracked tooth",
    ],
    "company": [
        "Northwind Labs",
        "Bluefin Analytics",
        "Helio Robotics",
        "Greenleaf Health",
        "Atlas Freight",
        "Quartz Media",
    ],
    "role": [
        "data engineer",
        "product designer",
        "operations lead",
        "UX researcher",
        "backend developer",
        "marketing manager",
    ],
    "project": [
        "a warehouse scheduling app",
        "a patient check-in kiosk",
        "a solar forecasting dashboard",
        "a podcast recommendation engine",
    ],
    "manager": ["Ingrid", "Victor", "Leila", "Samuel", "Beatrice", "Hugo"],
    "instrument": ["cello", "violin", "piano", "saxophone", "ukulele", "drums"],
    "teacher": ["Mrs. Okafor", "Mr. Lindqvist", "Ms. Duarte", "Mr. Abernathy", "Mrs. Castellano"],
    "teacher_job": ["orchestra musician", "music professor", "jazz pianist", "choir director"],
    "piece": [
        "a Bach minuet",
        "Clair de Lune",
        "a Beatles medley",
        "the Pink Panther theme",
        "a Chopin nocturne",
    ],
    "vehicle": ["car", "motorbike", "e-bike", "camper van"],
    "model": [
        "Subaru Outback",
        "Vespa Primavera",
        "Honda Civic",
        "VW California",
        "Cannondale Treadwell",
        "Mazda MX-5",
    ],
    "color": ["dark green", "bright yellow", "matte grey", "cherry red", "navy blue", "pearl white"],
    "problem": [
        "the battery died",
        "a tyre blew out",
        "the clutch started slipping",
        "the brakes squealed",
        "the headlights kept flickering",
    ],
}
ZH = {
    "names": [
        ("李雷", "韩梅梅"),
        ("王芳", "陈强"),
        ("赵敏", "刘洋"),
        ("孙悦", "周杰"),
        ("林晓", "郭峰"),
        ("何静", "马超"),
        ("吴倩", "郑浩"),
        ("许诺", "唐宁"),
    ],
    "city": [
        "大理",
        "成都",
        "西安",
        "厦门",
        "哈尔滨",
        "桂林",
        "青岛",
        "敦煌",
        "丽江",
        "拉萨",
        "苏州",
        "重庆",
        "三亚",
        "长沙",
    ],
    "lodging": [
        "洱海边的民宿",
        "青年旅舍",
        "老城区的四合院",
        "山里的小木屋",
        "江景酒店",
        "农家乐",
        "海边的渔村客栈",
        "胡同里的小公寓",
    ],
    "landmark": ["古城墙", "夜市", "老码头", "植物园", "温泉", "钟楼", "湖边栈道", "寺庙"],
    "food": ["酸菜鱼", "肉夹馍", "沙茶面", "红油抄手", "锅包肉", "米粉", "烤乳扇", "热干面"],
    "pet": [
        ("狗", "柯基"),
        ("狗", "金毛"),
        ("猫", "布偶猫"),
        ("狗", "边牧"),
        ("猫", "橘猫"),
        ("兔子", "垂耳兔"),
        ("狗", "柴犬"),
    ],
    "petname": ["豆豆", "年糕", "可乐", "团子", "旺财", "小满", "糯米", "芝麻"],
    "illness": ["耳朵发炎", "爪子扭伤了", "误吞袜子闹肚子", "对鸡肉过敏", "牙齿裂了"],
    "company": ["星河科技", "蓝鲸数据", "远航物流", "青禾医疗", "云帆传媒", "极光机器人"],
    "role": ["数据工程师", "产品设计师", "运营主管", "用户研究员", "后端开发", "市场经理"],
    "project": ["仓储排班系统", "医院自助挂号机", "光伏功率预测平台", "播客推荐引擎"],
    "manager": ["张总", "刘姐", "老黄", "陈经理", "宋老师", "吴主管"],
    "instrument": ["大提琴", "小提琴", "钢琴", "萨克斯", "尤克里里", "架子鼓"],
    "teacher": ["周老师", "方老师", "钱老师", "韦老师", "秦老师"],
    "teacher_job": ["交响乐团乐手", "音乐学院教授", "爵士钢琴手", "合唱团指挥"],
    "piece": ["巴赫的小步舞曲", "《月光》", "披头士串烧", "《梁祝》选段", "肖邦夜曲"],
    "vehicle": ["车", "摩托车", "电动自行车", "房车"],
    "model": ["比亚迪海豚", "小牛电动车", "本田思域", "大众途观", "雅迪冠能", "马自达MX-5"],
    "color": ["墨绿色", "明黄色", "哑光灰", "樱桃红", "藏青色", "珍珠白"],
    "problem": ["电瓶没电了", "轮胎爆了", "离合器打滑", "刹车一直响", "车灯老是闪"],
}
MONTHS_EN = "January February March April May June July August September October November December".split()
ZH_NUM = "零一二三四五六七八九十"


def _zh_month(m: int) -> str:
    return (ZH_NUM[m] if m <= 10 else "十" + ZH_NUM[m - 10]) + "月"


# Each event: turns as (who, template, fact keys); "S" is the event's subject, "O" the friend.
Turn = tuple[str, str, tuple[str, ...]]
EVENTS_EN: dict[str, list[Turn]] = {
    "trip": [
        ("S", "Guess what, {O}? I just got back from {city}.", ("city",)),
        ("O", "Oh nice! How long were you there?", ()),
        ("S", "Six days. We rented a {lodging} close to the {landmark}.", ("lodging",)),
        ("O", "That sounds lovely. What was the best part?", ()),
        ("S", "Honestly the {food}. I would go back just for that.", ("food",)),
        ("O", "I'm jealous, I haven't been anywhere in ages.", ()),
    ],
    "pet": [
        ("S", "We adopted a {kind} this week! We named her {petname}.", ("petname",)),
        ("O", "Aww, congratulations! What breed is she?", ()),
        ("S", "A {breed}, just over a year old and full of energy.", ("breed",)),
        ("O", "You have to send me pictures of {petname}.", ()),
    ],
    "pet_vet": [
        ("S", "Poor {petname} had to go to the vet on Monday.", ("vet",)),
        ("O", "Oh no, is she okay? What happened?", ()),
        ("S", "It turned out to be {illness}. She's on medication now.", ("illness",)),
        ("O", "Glad it wasn't anything worse. Give her a hug from me.", ()),
    ],
    "job": [
        ("S", "Big news: I accepted an offer from {company}!", ("company",)),
        ("O", "Congratulations! What will you be doing there?", ()),
        ("S", "I'll be their new {role}. I start next month.", ("role",)),
        ("O", "That's a perfect fit for you.", ()),
    ],
    "job_update": [
        ("S", "The new job is intense, we're racing to ship {project}.", ("project",)),
        ("O", "Are they treating you well at least?", ()),
        ("S", "Yes, my boss {manager} lets me lead the whole thing.", ("manager",)),
        ("O", "That's a lot of trust after a few weeks.", ()),
    ],
    "hobby": [
        ("S", "I finally signed up for {instrument} lessons.", ("instrument",)),
        ("O", "Fun! Who is teaching you?", ()),
        ("S", "{teacher}, a retired {teacher_job}. She is strict but kind.", ("teacher",)),
        ("O", "Let me know when you play your first concert.", ()),
    ],
    "hobby_recital": [
        ("S", "I played my very first recital on Saturday!", ("recital",)),
        ("O", "How did it go? What did you play?", ()),
        ("S", "{piece}. My hands were shaking the whole time.", ("piece",)),
        ("O", "I bet it sounded great anyway.", ()),
    ],
    "buy": [
        ("S", "I finally bought a {vehicle}.", ("vehicle",)),
        ("O", "About time! Which one did you get?", ()),
        ("S", "A {color} {model}. It was on sale.", ("model",)),
        ("O", "Sounds great, take me for a ride sometime.", ()),
    ],
    "buy_problem": [
        ("S", "The {model} left me stranded on the highway yesterday.", ("breakdown",)),
        ("O", "Oh no! What went wrong?", ()),
        ("S", "{problem}, so I had it towed to the dealer.", ("problem",)),
        ("O", "At least the warranty should cover it.", ()),
    ],
}
EVENTS_ZH: dict[str, list[Turn]] = {
    "trip": [
        ("S", "{O}，跟你说，我刚从{city}回来。", ("city",)),
        ("O", "真好！在那边待了几天？", ()),
        ("S", "六天，我们住在{lodging}，离{landmark}很近。", ("lodging",)),
        ("O", "听起来很惬意，最喜欢哪一部分？", ()),
        ("S", "说实话是{food}，光为了它我都愿意再去一次。", ("food",)),
        ("O", "好羡慕，我好久没出门了。", ()),
    ],
    "pet": [
        ("S", "我们这周领养了一只{kind}！给她取名叫{petname}。", ("petname",)),
        ("O", "哇，恭喜！是什么品种？", ()),
        ("S", "是{breed}，一岁多一点，精力特别旺盛。", ("breed",)),
        ("O", "一定要多发点{petname}的照片给我。", ()),
    ],
    "pet_vet": [
        ("S", "可怜的{petname}周一去看了兽医。", ("vet",)),
        ("O", "啊，她还好吗？怎么了？", ()),
        ("S", "结果是{illness}，现在在吃药。", ("illness",)),
        ("O", "还好不严重，替我抱抱她。", ()),
    ],
    "job": [
        ("S", "大消息：我接了{company}的offer！", ("company",)),
        ("O", "恭喜恭喜！去那边做什么？", ()),
        ("S", "做他们新的{role}，下个月入职。", ("role",)),
        ("O", "这个岗位太适合你了。", ()),
    ],
    "job_update": [
        ("S", "新工作太忙了，我们在赶{project}的上线。", ("project",)),
        ("O", "那他们对你好吗？", ()),
        ("S", "挺好的，我的领导{manager}让我负责整个项目。", ("manager",)),
        ("O", "才几周就这么信任你，不容易。", ()),
    ],
    "hobby": [
        ("S", "我终于报名学{instrument}了。", ("instrument",)),
        ("O", "好玩！谁教你？", ()),
        ("S", "{teacher}，以前是{teacher_job}，很严格但人很好。", ("teacher",)),
        ("O", "第一次演出记得告诉我。", ()),
    ],
    "hobby_recital": [
        ("S", "我周六第一次登台演奏了！", ("recital",)),
        ("O", "怎么样？弹了什么？", ()),
        ("S", "{piece}，我手一直在抖。", ("piece",)),
        ("O", "肯定还是很好听。", ()),
    ],
    "buy": [
        ("S", "我终于买了一辆{vehicle}。", ("vehicle",)),
        ("O", "早该买了！哪一款？", ()),
        ("S", "{color}的{model}，赶上打折。", ("model",)),
        ("O", "改天带我兜兜风。", ()),
    ],
    "buy_problem": [
        ("S", "那辆{model}昨天在高速上趴窝了。", ("breakdown",)),
        ("O", "天哪！出什么问题了？", ()),
        ("S", "{problem}，只好叫拖车送去4S店。", ("problem",)),
        ("O", "还好应该在保修期内。", ()),
    ],
}
# Version 2: other wordings of the same turns (picked per event), so no sentence is shared by
# every conversation and an answer is not always phrased the way the dev split taught.
VARIANTS_EN: dict[tuple[str, int], list[str]] = {
    ("trip", 0): [
        "Hi {O}! I'm back home after a week in {city}.",
        "{O}, I spent last week wandering around {city}.",
    ],
    ("trip", 2): [
        "Our base was a {lodging}, a short walk from the {landmark}.",
        "We booked a {lodging} right by the {landmark}, loved it.",
    ],
    ("trip", 4): [
        "The {food}, no contest. I still dream about it.",
        "Eating {food} every single day, to be honest.",
    ],
    ("pet", 0): [
        "Meet the newest family member: a {kind} called {petname}!",
        "We brought home a rescue {kind} on Sunday, her name is {petname}.",
    ],
    ("pet", 2): [
        "She's a {breed}, about fourteen months old.",
        "{breed}, and she never stops running around.",
    ],
    ("pet_vet", 0): [
        "{petname} was off her food, so we took her to the animal clinic.",
        "Rough week, {petname} needed an emergency appointment with the vet.",
    ],
    ("pet_vet", 2): [
        "The diagnosis was {illness}. Pills twice a day for now.",
        "Vet says {illness}, nothing serious.",
    ],
    ("job", 0): [
        "I signed the contract with {company} yesterday!",
        "So, {company} made me an offer and I said yes.",
    ],
    ("job", 2): ["The title is {role}. First day is in four weeks.", "They hired me as a {role}."],
    ("job_update", 0): [
        "Crunch time at the office, we have to launch {project} this quarter.",
        "Everything at work revolves around {project} right now.",
    ],
    ("job_update", 2): [
        "My manager, {manager}, put me in charge of it.",
        "{manager}, who I report to, gave me the lead role.",
    ],
    ("hobby", 0): [
        "I started taking {instrument} classes on Thursdays.",
        "Guess who bought a {instrument} and found a tutor.",
    ],
    ("hobby", 2): [
        "{teacher}. She used to be a {teacher_job}, very demanding.",
        "An old {teacher_job} named {teacher} gives me lessons.",
    ],
    ("hobby_recital", 0): [
        "Saturday was my first time performing in front of an audience!",
        "I did my debut concert at the community hall this weekend.",
    ],
    ("hobby_recital", 2): ["I went with {piece}, and I was shaking.", "{piece}, and I only messed up twice."],
    ("buy", 0): ["I'm now the proud owner of a {vehicle}.", "Spent my savings on a {vehicle} last weekend."],
    ("buy", 2): [
        "A {model}, {color}, second-hand but like new.",
        "The {color} {model}, got a good deal on it.",
    ],
    ("buy_problem", 0): [
        "My {model} broke down on the motorway last night.",
        "Had to call roadside assistance for the {model}.",
    ],
    ("buy_problem", 2): ["Turns out {problem}. It's at the garage now.", "The mechanic said {problem}."],
}
VARIANTS_ZH: dict[tuple[str, int], list[str]] = {
    ("trip", 0): ["{O}，我在{city}玩了一周，昨天刚到家。", "{O}，上礼拜我去{city}逛了一圈。"],
    ("trip", 2): [
        "我们订的是{lodging}，走几步就到{landmark}。",
        "住在{lodging}，就在{landmark}旁边，特别方便。",
    ],
    ("trip", 4): ["当然是{food}，到现在还惦记着。", "天天吃{food}，太香了。"],
    ("pet", 0): [
        "家里添了新成员：一只叫{petname}的{kind}！",
        "周日我们从救助站接回一只{kind}，名字叫{petname}。",
    ],
    ("pet", 2): ["{breed}，十四个月大。", "是只{breed}，整天跑来跑去停不下来。"],
    ("pet_vet", 0): ["{petname}这两天不吃东西，带她去了宠物医院。", "这周够呛，{petname}挂了急诊。"],
    ("pet_vet", 2): ["诊断是{illness}，每天吃两次药。", "医生说是{illness}，问题不大。"],
    ("job", 0): ["昨天我跟{company}签了合同！", "{company}给我发了录用通知，我答应了。"],
    ("job", 2): ["职位是{role}，四周后报到。", "他们招我去当{role}。"],
    ("job_update", 0): ["公司这季度必须把{project}做出来，天天加班。", "现在单位里一切都围着{project}转。"],
    ("job_update", 2): ["我上级{manager}把这事全交给我了。", "{manager}是我直属领导，让我牵头。"],
    ("hobby", 0): ["我每周四去上{instrument}课了。", "我买了一把{instrument}，还找了个老师。"],
    ("hobby", 2): [
        "{teacher}，原来是{teacher_job}，要求特别高。",
        "教我的是{teacher}，退休前是{teacher_job}。",
    ],
    ("hobby_recital", 0): ["周六我头一回在观众面前表演！", "这周末我在社区礼堂办了第一场演出。"],
    ("hobby_recital", 2): ["选的是{piece}，紧张得要命。", "{piece}，只错了两个地方。"],
    ("buy", 0): ["我现在也是有{vehicle}的人了。", "上周末我把积蓄花在了一辆{vehicle}上。"],
    ("buy", 2): ["{model}，{color}，二手的但跟新的一样。", "{color}的{model}，价格挺划算。"],
    ("buy_problem", 0): ["我的{model}昨晚在路上抛锚了。", "{model}坏在半路，只好叫了道路救援。"],
    ("buy_problem", 2): ["原来是{problem}，现在在修理厂。", "师傅说{problem}。"],
}
FILLER_EN = [
    "Did you catch the game last night?",
    "Work has been so busy this week.",
    "I keep meaning to call my mom.",
    "My cousin keeps talking about moving to {city}.",
    "We had {food} for dinner, not bad at all.",
    "The neighbours' {breed} barked all night again.",
    "I saw a {color} {model} parked outside the office.",
    "A friend of mine just started learning {instrument} too.",
    "It rained the whole weekend here.",
    "I read an article about {company} hiring like crazy.",
    "Have you tried that new coffee place downtown?",
    "I'm thinking of repainting the living room.",
    "My sister says {city} is overrated, can you believe it?",
    "I need a holiday, honestly.",
    "Remind me to send you that podcast about {project}.",
    "The traffic this morning was unbelievable.",
    "I finally cleaned out the garage.",
    "Someone at the gym was playing {piece} on a speaker.",
    "We should do a movie night soon.",
    "I'm trying to drink less coffee, it's not going well.",
    "Do you still have that recipe for {food}?",
    "My phone screen cracked again.",
    "I watched a documentary about a {lodging} in the mountains.",
    "The {landmark} in our town is being renovated.",
    "Lunch was terrible today.",
    "I've been sleeping badly lately.",
    "Our team lead {manager} from the old job says hi.",
    "I might take a pottery class.",
    "The heating in my flat is broken again.",
    "Ha, that's so true.",
]
FILLER_EN_REPLY = ["Ha, same here.", "Tell me about it.", "Oh really?", "That's funny.", "I know what you mean.",
                   "No way.", "Good to hear.", "Hmm, maybe.", "Fair enough.", "Totally."]  # fmt: skip
FILLER_ZH = [
    "昨晚的比赛你看了吗？",
    "这周工作忙死了。",
    "我一直想给我妈打个电话。",
    "我表哥老说想搬去{city}。",
    "晚饭吃了{food}，还不错。",
    "邻居家的{breed}又叫了一整晚。",
    "公司楼下停了一辆{color}的{model}。",
    "我一个朋友也开始学{instrument}了。",
    "这边整个周末都在下雨。",
    "看到新闻说{company}在疯狂招人。",
    "市中心新开的咖啡店你去过吗？",
    "我在考虑把客厅重新刷一遍。",
    "我姐说{city}被高估了，你信吗？",
    "说真的，我需要放个假。",
    "提醒我把那期讲{project}的播客发你。",
    "今天早上堵车堵得离谱。",
    "我终于把车库收拾干净了。",
    "健身房有人用音箱放{piece}。",
    "我们找时间一起看个电影吧。",
    "我在努力少喝咖啡，效果不太好。",
    "你还有那个{food}的做法吗？",
    "我手机屏幕又摔裂了。",
    "看了一个关于{lodging}的纪录片。",
    "我们这边的{landmark}在翻修。",
    "今天午饭太难吃了。",
    "最近睡得不太好。",
    "以前公司的{manager}让我问你好。",
    "我可能会去上个陶艺课。",
    "家里的暖气又坏了。",
    "哈哈，确实是这样。",
]
FILLER_ZH_REPLY = ["哈哈，我也是。", "可不是嘛。", "真的吗？", "太好笑了。", "我懂你的意思。", "不会吧。", "那挺好。",
                   "嗯，也许吧。", "有道理。", "完全同意。"]  # fmt: skip


def _vocab(lang: str) -> dict:
    return EN if lang == "en" else ZH


def _fill(template: str, slots: dict[str, str]) -> str:
    return template.format(**slots)


def _chat(rng: random.Random, voc: dict, filler: list[str]) -> str:
    slots = {k: rng.choice(voc[k]) for k in ("city", "food", "lodging", "landmark", "company", "manager",
                                             "instrument", "piece", "color", "model", "project")}  # fmt: skip
    slots["breed"] = rng.choice(voc["pet"])[1]
    sep = " " if voc is EN else ""
    return sep.join(_fill(t, slots) for t in rng.sample(filler, rng.choice((1, 2, 2, 3))))


def _plan_events(rng: random.Random, sessions: int) -> list[tuple[int, str, int, dict]]:
    """(session, event kind, subject 0/1, instance id) for both speakers; follow-ups come later."""
    plan: list[tuple[int, str, int, dict]] = []
    for subject in (0, 1):
        for _ in range(3):  # trips
            plan.append((rng.randrange(sessions), "trip", subject, {}))
        for kind, follow in (("pet", "pet_vet"), ("job", "job_update"), ("hobby", "hobby_recital"),
                             ("buy", "buy_problem")):  # fmt: skip
            first = rng.randrange(sessions - 6)
            link: dict = {}
            plan.append((first, kind, subject, link))
            plan.append((first + rng.randint(3, 6), follow, subject, link))
    return plan


def conversation(lang: str, seed: int, sessions: int = 24, version: int = 2) -> Conversation:
    """One conversation in `lang` ("en" or "zh") for `seed`.

    `version=1` is the first generator (one wording per event turn, no `paraphrase` questions),
    kept to reproduce the numbers measured with it; 2 (default) varies the wording of event turns
    and adds `paraphrase` questions that share no content word with their evidence.
    """
    if lang not in ("en", "zh"):
        raise ValueError(f"lang={lang!r} is not supported; use 'en' or 'zh'.")
    if version not in (1, 2):
        raise ValueError(f"version={version!r} is not supported; use 1 or 2.")
    rng = random.Random(f"{lang}-{seed}" if version == 1 else f"{lang}-{seed}-v{version}")
    variants = {} if version == 1 else VARIANTS_EN if lang == "en" else VARIANTS_ZH
    voc = _vocab(lang)
    events = EVENTS_EN if lang == "en" else EVENTS_ZH
    filler, replies = (FILLER_EN, FILLER_EN_REPLY) if lang == "en" else (FILLER_ZH, FILLER_ZH_REPLY)
    names = rng.choice(voc["names"])
    day = datetime(2023, 5, 1, tzinfo=UTC) + timedelta(days=rng.randint(0, 60))
    dates = []
    for _ in range(sessions):
        dates.append(day.replace(hour=rng.randint(9, 21), minute=rng.randint(0, 59)))
        day += timedelta(days=rng.randint(6, 16))
    plan = sorted(_plan_events(rng, sessions), key=lambda p: (p[0], rng.random()))
    used: dict[str, set[str]] = {}

    def pick(key: str) -> str:
        pool = [v for v in voc[key] if v not in used.setdefault(key, set())] or voc[key]
        value = rng.choice(pool)
        used[key].add(value)
        return value

    messages: list[BaseMessage] = []
    facts: list[dict] = []  # per event: kind, subject, session, slots, {fact key: message id}
    n = 0

    def say(who: int, text: str, at: datetime) -> str:
        nonlocal n
        msg_id = f"{lang}{seed}_m{n:04d}"
        n += 1
        cls = HumanMessage if who == 0 else AIMessage
        messages.append(
            cls(text, id=msg_id, name=names[who], additional_kwargs={"created_at": at.isoformat()})
        )
        return msg_id

    for s, start in enumerate(dates):
        at = start
        todays = [p for p in plan if p[0] == s]
        speaker = rng.randrange(2)
        greet = (
            ("Hey {o}, how are you?", "Good, you?")
            if lang == "en"
            else ("{o}，最近怎么样？", "挺好的，你呢？")
        )
        for line in greet:
            say(speaker, line.format(o=names[1 - speaker]), at)
            speaker, at = 1 - speaker, at + timedelta(minutes=rng.randint(1, 3))
        rounds = rng.randint(13, 18)  # small talk pairs this session, shared vocabulary
        gaps = sorted(rng.randint(0, rounds) for _ in todays) + [rounds]
        done = 0
        for index, item in enumerate([*todays, None]):
            for _ in range(gaps[index] - done):
                say(speaker, _chat(rng, voc, filler), at)
                at += timedelta(minutes=rng.randint(1, 3))
                reply = rng.choice(replies) + (" " if lang == "en" else "")
                say(1 - speaker, reply + _chat(rng, voc, filler) if rng.random() < 0.6 else reply.strip(), at)
                at += timedelta(minutes=rng.randint(1, 3))
                speaker = rng.randrange(2)
            done = gaps[index]
            if item is None:
                break
            _, kind, subject, link = item
            if not link.get("slots"):
                slots = {k: pick(k) for k in ("city", "lodging", "landmark", "food", "petname", "illness",
                                              "company", "role", "project", "manager", "instrument", "teacher",
                                              "teacher_job", "piece", "vehicle", "model", "color", "problem")}  # fmt: skip
                slots["kind"], slots["breed"] = rng.choice(voc["pet"])
                link["slots"] = slots
                link["ids"] = {}
            slots = {**link["slots"], "O": names[1 - subject]}
            for turn, (who, template, keys) in enumerate(events[kind]):
                other = variants.get((kind, turn))
                text = _fill(rng.choice([template, *other]) if other else template, slots)
                if rng.random() < 0.4:  # people mix topics: evidence turns carry small talk too
                    aside = _chat(rng, voc, filler)
                    text = f"{text} {aside}" if lang == "en" else text + aside
                msg_id = say(subject if who == "S" else 1 - subject, text, at)
                at += timedelta(minutes=rng.randint(1, 3))
                for key in keys:
                    link["ids"][key] = msg_id
            if kind in ("trip", "pet", "job", "hobby", "buy"):
                facts.append({"kind": kind, "subject": subject, "session": s, "link": link})
        bye = ("Talk soon!", "Bye!") if lang == "en" else ("回头聊！", "拜拜！")
        for line in bye:
            say(speaker, line, at)
            speaker, at = 1 - speaker, at + timedelta(minutes=1)
    conv = Conversation(lang, seed, messages, version=version)
    conv.questions = _questions(lang, rng, names, facts, dates)
    if version >= 2:
        conv.questions += _paraphrases(lang, names, facts)
    return conv


def _time_phrase(lang: str, when: datetime, end: datetime, rng: random.Random) -> str:
    months_back = (end.year - when.year) * 12 + end.month - when.month
    if lang == "en":
        if months_back == 1 and rng.random() < 0.5:
            return "last month"
        return f"in {MONTHS_EN[when.month - 1]} {when.year}"
    if months_back == 1 and rng.random() < 0.5:
        return "上个月"
    if when.year == end.year - 1 and rng.random() < 0.6:
        return f"去年{_zh_month(when.month)}"
    return f"{when.year}年{when.month}月"


def _questions(lang: str, rng: random.Random, names: tuple[str, str], facts: list[dict],
               dates: list[datetime]) -> list[Question]:  # fmt: skip
    en = lang == "en"
    out: list[Question] = []
    end = dates[-1]
    for f in facts:
        who, slots, ids = names[f["subject"]], f["link"]["slots"], f["link"]["ids"]
        kind = f["kind"]
        if kind == "trip":
            q = (f"Where did {who} stay on the trip to {slots['city']}?" if en
                 else f"{who}去{slots['city']}玩的时候住在哪里？")  # fmt: skip
            out.append(Question(q, [ids["city"], ids["lodging"]], "single"))
            q = (f"Which dish did {who} like best in {slots['city']}?" if en
                 else f"{who}在{slots['city']}最喜欢吃什么？")  # fmt: skip
            out.append(Question(q, [ids["city"], ids["food"]], "single"))
        elif kind == "pet":
            q = (f"What health problem did {who}'s {slots['breed']} have?" if en
                 else f"{who}家的{slots['breed']}得了什么病？")  # fmt: skip
            out.append(Question(q, [ids["breed"], ids["vet"], ids["illness"]], "multi_hop"))
        elif kind == "job":
            q = (f"What job did {who} take at {slots['company']}?" if en
                 else f"{who}在{slots['company']}做什么岗位？")  # fmt: skip
            out.append(Question(q, [ids["company"], ids["role"]], "single"))
            q = (f"Who is {who}'s boss at the {slots['role']} job?" if en
                 else f"{who}当{slots['role']}以后的领导是谁？")  # fmt: skip
            out.append(Question(q, [ids["role"], ids["manager"]], "multi_hop"))
        elif kind == "hobby":
            q = (f"What did {who} play at the first {slots['instrument']} recital?" if en
                 else f"{who}第一次{slots['instrument']}演出弹的是什么？")  # fmt: skip
            out.append(Question(q, [ids["instrument"], ids["recital"], ids["piece"]], "multi_session"))
        elif kind == "buy":
            q = (f"What went wrong with the {slots['color']} {slots['vehicle']} {who} bought?" if en
                 else f"{who}买的那辆{slots['color']}的{slots['vehicle']}出了什么问题？")  # fmt: skip
            out.append(Question(q, [ids["model"], ids["breakdown"], ids["problem"]], "multi_hop"))
    for subject, who in enumerate(names):
        trips = [f for f in facts if f["kind"] == "trip" and f["subject"] == subject]
        q = f"Which cities has {who} travelled to?" if en else f"{who}都去过哪些城市旅行？"
        out.append(Question(q, [t["link"]["ids"]["city"] for t in trips], "multi_session"))
        for t in trips:
            when = dates[t["session"]]
            same = [
                u
                for u in trips
                if (dates[u["session"]].year, dates[u["session"]].month) == (when.year, when.month)
            ]
            if len(same) != 1:
                continue
            phrase = _time_phrase(lang, when, end, rng)
            q = f"Where did {who} travel {phrase}?" if en else f"{who}{phrase}去哪里旅行了？"
            out.append(Question(q, [t["link"]["ids"]["city"]], "temporal"))
        for f in facts:
            if f["subject"] != subject or f["kind"] not in ("pet", "buy"):
                continue
            when = dates[f["session"]]
            phrase = _time_phrase(lang, when, end, rng)
            ids = f["link"]["ids"]
            if f["kind"] == "pet":
                q = f"What pet did {who} adopt {phrase}?" if en else f"{who}{phrase}领养了什么宠物？"
                out.append(Question(q, [ids["petname"], ids["breed"]], "temporal"))
            else:
                q = f"What did {who} buy {phrase}?" if en else f"{who}{phrase}买了什么？"
                out.append(Question(q, [ids["vehicle"], ids["model"]], "temporal"))
    return out


def _paraphrases(lang: str, names: tuple[str, str], facts: list[dict]) -> list[Question]:
    """Questions in other words than their evidence: no content word of the answer turn is asked."""
    en = lang == "en"
    asks = {
        "job": ("Which employer did {who} join?", "{who}跳槽去了哪家单位？", ("company",)),
        "pet": ("What is the name of the animal {who} took in?", "{who}新养的小动物叫什么？", ("petname",)),
        "hobby": ("Which musical instrument is {who} studying?", "{who}在练哪种乐器？", ("instrument",)),
        "buy": ("What kind of transport did {who} get for themselves?", "{who}入手了什么交通工具？",
                ("vehicle", "model")),
    }  # fmt: skip
    out = []
    for f in facts:
        if f["kind"] in asks:
            q_en, q_zh, keys = asks[f["kind"]]
            q = (q_en if en else q_zh).format(who=names[f["subject"]])
            out.append(Question(q, [f["link"]["ids"][k] for k in keys], "paraphrase"))
    return out


def conversations(lang: str, split: str, count: int, version: int = 2) -> list[Conversation]:
    """`count` conversations of the `dev` or `test` split (`version` as in `conversation`)."""
    if split not in SPLIT_SEEDS:
        raise ValueError(f"split={split!r} is not supported; use one of {sorted(SPLIT_SEEDS)}.")
    return [conversation(lang, SPLIT_SEEDS[split] + i, version=version) for i in range(count)]
