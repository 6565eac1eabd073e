"""English parts for `bench/memory_convgen3.py`: friends and housemates chatting, composed from pieces.

Templates: `[a|b|c]` picks one alternative (an empty one drops the part), `{slot}` is filled
afterwards. The owner of a fact speaks in the first person; `{who}` in a question is the owner's
name, `{their}` the owner's possessive pronoun, `{v}` the value, `{name}` a third person.
"""

from __future__ import annotations

NAMES = [
    ("Ines", "f"), ("Callum", "m"), ("Ruth", "f"), ("Dev", "m"), ("Marisol", "f"), ("Jonah", "m"),
    ("Hana", "f"), ("Felix", "m"), ("Bea", "f"), ("Oskar", "m"), ("Leila", "f"), ("Theo", "m"),
    ("Niamh", "f"), ("Rafael", "m"), ("Greta", "f"), ("Amir", "m"), ("Wen", "f"), ("Kofi", "m"),
]  # fmt: skip
PRONOUN = {"f": "her", "m": "his"}
THIRD = [  # third persons: (name, "f" / "m")
    ("Odile", "f"), ("Marcus", "m"), ("Sunny", "f"), ("Bram", "m"), ("Tilda", "f"), ("Pavel", "m"), ("Rosa", "f"),
    ("Ivo", "m"), ("Lotte", "f"), ("Gideon", "m"), ("Esme", "f"), ("Hugo", "m"), ("Anouk", "f"), ("Silas", "m"),
    ("Clem", "f"), ("Dario", "m"), ("Yusuf", "m"), ("Margit", "f"), ("Nell", "f"), ("Ansel", "m"), ("Petra", "f"),
    ("Joss", "m"),
]  # fmt: skip
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]  # fmt: skip

# -- one fact, said once: asked directly (single), in other words (paraphrase) or mixed ------------
SINGLE = [
    {
        "key": "job",
        "values": ["Brightwater Logistics", "Kestrel Analytics", "Halvorsen Engineering", "Mosaic Health",
                   "Northgate Credit Union", "Tideline Games", "Copperleaf Studio", "Ardent Biotech",
                   "Fenwick & Lowe", "Bluejay Robotics"],
        "lead": ["any news from the interviews?", "so?? did they call back", "how did the second round go"],
        "say": ["[they called!|got the offer!|ok big news:] I signed with {v} [this morning|yesterday|an hour ago], start date is the [3rd|10th|17th]",
                "[so yeah,|well,|] I'm going to {v}. contract signed, [notice handed in|told my boss already|still need to tell my boss]",
                "accepted the offer from {v} [in the end|after all that back and forth]. [slightly less money but way better hours|more money, longer commute]"],
        "react": ["congrats!!!", "YES. drinks on you", "that's huge, well done", "finally, you deserved it"],
        "more": [("what's the team like?", "small, [six|seven|nine] people, they seemed [nice|sharp|a bit quiet]"),
                 ("remote or office?", "[hybrid, two days in|mostly office for the first months|fully remote, thank god]")],
        "ask": ["Which company did {who} sign a contract with?", "Where did {who} accept a job offer?"],
        "para": ["Who is {who}'s new employer?", "Which firm hired {who}?"],
        "mixed": ["Which company gave {who} the offer (入职哪家公司)?"],
        "echo": ["my cousin {name} interviewed at {v} too, didn't get past the first call",
                 "{v} is hiring again btw, saw it on the bus ad", "is {v} the one near the station?"],
    },
    {
        "key": "course",
        "values": ["a pottery class", "evening Portuguese", "a welding course", "bouldering lessons",
                   "a sourdough workshop", "salsa classes", "a life drawing class", "beginner sailing"],
        "lead": ["did you end up doing something for yourself this term?", "what are you doing on thursdays now"],
        "say": ["I signed up for {v}! thursday evenings, [7 till 9|6:30 to 8|half 7 to 9]",
                "[treated myself and|finally] booked {v}, [ten|eight|twelve] weeks, starts next thursday",
                "thursdays are {v} now. [already regretting it|so excited|paid upfront so no backing out]"],
        "react": ["love that", "oh fun!", "you'll be great", "send pics"],
        "more": [("is it expensive?", "not too bad, [140|190|220] for the whole term"),
                 ("who's teaching it?", "some retired guy who [used to do it professionally|is very intense about it]")],
        "ask": ["What did {who} sign up for on Thursday evenings?", "Which class did {who} book for Thursdays?"],
        "para": ["Which weekly hobby course is {who} taking?", "What does {who} learn once a week after work?"],
        "mixed": ["{who} 每周四 what class?"],
        "echo": ["{name} did {v} last year and quit after two weeks lol", "they advertise {v} at the community centre too"],
    },
    {
        "key": "gift",
        "values": ["a vintage record player", "a fly-fishing rod", "a cast-iron skillet", "a telescope",
                   "a leather weekend bag", "a bread maker", "a signed football shirt", "noise-cancelling headphones"],
        "lead": ["what did you get your dad in the end??", "did the birthday present arrive in time?"],
        "say": ["got my dad {v} for his 60th. [he pretended not to cry|he loved it|mum says he uses it daily]",
                "[in the end|after a week of panic] it was {v} for dad's sixtieth",
                "dad's 60th present: {v}. [cost a fortune|found it second hand|my brother chipped in]"],
        "react": ["aww", "best child award", "he deserves it", "ok that's a good one"],
        "more": [("how was the party?", "loud. [aunt Vera gave a speech|someone broke a glass|karaoke happened]")],
        "ask": ["What did {who} get {their} dad for his 60th birthday?", "What was {who}'s present for {their} father's sixtieth?"],
        "para": ["What gift did {who} give {their} father when he turned sixty?", "Which present marked the big birthday of {who}'s old man?"],
        "echo": ["I saw {v} in a shop window and thought of your dad", "{name} wants {v} for christmas, so random"],
    },
    {
        "key": "allergy",
        "values": ["birch pollen", "cashews", "penicillin", "dust mites", "shellfish", "cat dander", "sesame"],
        "lead": ["what did the allergist say?", "did you get the test results back?"],
        "say": ["results are in: I'm allergic to {v}. [explains a lot|great, just great|at least now I know]",
                "turns out it's {v}. [carrying the antihistamines everywhere now|the doctor was weirdly cheerful about it]",
                "allergist says {v}. [which is annoying because|ugh and] [I love it|it's everywhere]"],
        "react": ["oh no", "at least you know now", "noted, no more of that at mine", "ugh sorry"],
        "more": [("is it serious?", "[mild|moderate|bad enough that I need a pen], she said to avoid it completely")],
        "ask": ["What is {who} allergic to?", "What did the allergy test show for {who}?"],
        "para": ["Which substance gives {who} a reaction, according to the specialist?", "What must {who} stay away from for medical reasons?"],
        "mixed": ["{who} 对什么过敏 (allergy)?"],
        "echo": ["{name} is allergic to {v} as well, it's so common", "the menu said may contain {v}"],
    },
    {
        "key": "car",
        "values": ["a grey Skoda Octavia", "a 2019 Mazda 3", "a red Honda Jazz", "a Kia Niro hybrid",
                   "a VW Touran", "a Toyota Yaris", "a green Volvo V60", "a Renault Zoe"],
        "lead": ["so what did you end up buying", "did you go and look at that car?"],
        "say": ["bought it! {v}, [used|ex-demo|nearly new], [41|28|63] thousand miles on it",
                "we're now the proud owners of {v} [lol|haha|]. the dealer threw in [winter tyres|a year of servicing|floor mats]",
                "went with {v} in the end, [paid|knocked them down to] [9,400|11,250|14,800]"],
        "react": ["road trip!", "nice, very sensible", "congrats on the wheels", "ooh"],
        "more": [("how's it to drive?", "smooth, [the parking sensors are a lifesaver|bit sluggish on hills|the boot is huge]")],
        "ask": ["What car did {who} buy?", "Which car did {who} end up getting?"],
        "para": ["What does {who} drive now?", "Which vehicle did {who} purchase?"],
        "echo": ["{name} drives {v} and it's always in the garage", "got stuck behind {v} doing 20 the whole way"],
    },
    {
        "key": "plumber",
        "values": ["Gustavo", "Mr Okafor", "a guy called Leszek", "Deirdre from FixRight", "Tobias", "Marguerite"],
        "lead": ["is the leak fixed?", "did anyone come about the boiler?"],
        "say": ["the plumber came, {v}, [sorted it in an hour|had to order a part|charged 90 for the callout]",
                "[finally|] got someone in: {v}. [highly recommend|bit chatty but good|very tidy]",
                "{v} fixed the pipes under the sink [yesterday|this morning]. [no more bucket|water everywhere first though]"],
        "react": ["phew", "save that number", "thank god", "finally"],
        "more": [("how much?", "[120|180|75] all in, cash")],
        "ask": ["What is the name of the plumber {who} had round?", "Who did {who} get in to fix the leak?"],
        "para": ["Who repaired the pipework at {who}'s flat?", "Which tradesperson sorted out {who}'s water problem?"],
        "echo": ["{v} also did my neighbour's bathroom apparently", "my landlord keeps promising to send someone"],
    },
    {
        "key": "bookclub",
        "values": ["The Remains of the Day", "Piranesi", "Educated", "A Gentleman in Moscow", "Station Eleven",
                   "The Overstory", "Small Things Like These", "Klara and the Sun"],
        "lead": ["what's the book club reading?", "did your book club finally agree on something"],
        "say": ["book club picked {v} for next month. [I voted for it|not my choice|I've read it before, shh]",
                "we're doing {v} [next|this] month, [anyone want my spare copy?|library has a waiting list]",
                "[after a 40 minute debate|democracy happened and] it's {v}"],
        "react": ["good one", "never read it", "heard it's sad", "ooh I loved that"],
        "ask": ["Which book did {who}'s book club pick?", "What is {who}'s book club reading next?"],
        "para": ["Which novel is {who}'s reading group going through?", "What title did the literary circle {who} belongs to choose?"],
        "echo": ["{name} lent me {v} ages ago, never gave it back", "they're making {v} into a film I think"],
    },
    {
        "key": "mortgage",
        "values": ["3.85", "4.1", "4.35", "3.6", "4.79", "5.05"],
        "lead": ["did the bank come back on the mortgage?", "so what rate did you get in the end"],
        "say": ["locked the mortgage at {v}% fixed for [two|five] years. [could be worse|broker was useful after all]",
                "bank approved it! {v} percent, [five|two]-year fix",
                "we got {v}% in the end. [I'll take it|not great not terrible|the broker fee was steep though]"],
        "react": ["congrats, that's decent", "nice, a grown-up", "oh that's not bad at all"],
        "ask": ["What mortgage rate did {who} lock in?", "What rate did {who} get on the mortgage?"],
        "para": ["At what interest was {who}'s home loan fixed?", "How much interest does {who} pay on the house loan?"],
        "mixed": ["{who} 的房贷 rate 是多少?"],
        "echo": ["{name} got like {v} last month, rates are all over the place", "the bank ad says from {v}%"],
    },
    {
        "key": "venue",
        "values": ["an old barn in Hollow Creek", "the glasshouse at the botanical garden", "a lakeside hotel in Bellmoor",
                   "the rowing club by the river", "a vineyard outside Sandford", "the town hall, then the pub"],
        "lead": ["have you found a wedding venue?", "any luck with venues?"],
        "say": ["we booked {v}! [deposit paid|june next year|so relieved]",
                "the wedding is going to be at {v}. [mum cried|it's perfect|nobody else wanted a tuesday haha]",
                "[venue sorted:|decided.] {v}. [just the guest list to fight about now|cheaper than we feared]"],
        "react": ["that sounds dreamy", "amazing!!", "I'm already picking an outfit"],
        "ask": ["Where is {who}'s wedding venue?", "Which venue did {who} book for the wedding?"],
        "para": ["Where will {who} get married?", "At which place is {who} tying the knot?"],
        "echo": ["{name} had her wedding at {v}, it rained all day", "went to a party at {v} years ago"],
    },
    {
        "key": "cholesterol",
        "values": ["6.2", "5.8", "7.1", "4.9", "6.6"],
        "lead": ["how was the check-up?", "did you get your blood results?"],
        "say": ["cholesterol is {v}. [the GP gave me the look|so less cheese apparently|not as bad as dad's]",
                "blood test back, cholesterol {v}, [everything else fine|iron a bit low too]"],
        "react": ["porridge era begins", "could be worse", "oof"],
        "ask": ["What was {who}'s cholesterol reading?", "What cholesterol level did {who}'s blood test show?"],
        "para": ["What number did {who}'s blood work give for fats in the blood?"],
        "echo": ["my mum's cholesterol was {v} and they put her on statins", "{name} says {v} is fine, he's not a doctor though"],
    },
    {
        "key": "tattoo",
        "values": ["a tiny whale", "a sprig of lavender", "a paper crane", "my grandmother's handwriting", "a compass rose"],
        "lead": ["did you go through with the tattoo?", "so... the tattoo?"],
        "say": ["I did it! {v} on my [wrist|ankle|shoulder]. [didn't hurt much|hurt like hell]",
                "new ink: {v}. [mum doesn't know yet|healing nicely]"],
        "react": ["show me!!", "so cute", "brave"],
        "ask": ["What tattoo did {who} get?", "What design is {who}'s new tattoo?"],
        "para": ["What picture is now inked on {who}'s skin?"],
        "echo": ["{name} wants {v} tattoo too, copycat", "saw someone with {v} on the tram"],
    },
]  # fmt: skip

# -- a value that changes later: the newest one is the answer ---------------------------------------
UPDATE = [
    {
        "key": "rent",
        "values": ("money", 1150, 2300, 50),
        "say0": ["rent here is {v} a month, [which is already painful|not bad for the area|bills on top]",
                 "I pay {v} for the flat [before bills|including water]"],
        "sayn": ["landlord [put the rent up|raised the rent] [again|], it's {v} now. [fuming|can't wait to move]",
                 "new lease came, {v} a month from [next month|april|june]. [sigh|ugh]"],
        "ask": ["How much rent does {who} pay now?", "What is {who}'s rent at the moment?"],
        "mixed": ["{who} 现在房租 how much per month?", "What's {who}'s rent now (房租)?"],
        "echo": ["{name} pays like {v} for a room, london is insane", "saw a flat for {v} and it had no windows"],
    },
    {
        "key": "pb",
        "values": ("halftime",),
        "say0": ["did the half marathon in {v}! [legs are dead|first one ever|so happy]",
                 "half marathon time: {v}. [goal is under 1:50 next time|not bad for a first go]"],
        "sayn": ["new PB!!! {v} on the half. [cried at the finish|splits were perfect]",
                 "knocked it down to {v} [this weekend|yesterday]. [training finally paying off|windy too]"],
        "ask": ["What is {who}'s best half marathon time now?", "What's {who}'s current personal best for the half marathon?"],
        "mixed": ["{who} 的半马 PB is what now?"],
        "echo": ["{name} ran it in {v} and he hasn't trained at all, unfair", "the pacer for {v} had a balloon"],
    },
    {
        "key": "commute",
        "values": ("minutes",),
        "say0": ["commute is {v} minutes door to door, [not too bad|two buses though|if the train is on time]"],
        "sayn": ["with the new line my commute is down to {v} minutes. [life changing|more sleep]",
                 "they changed the timetable, commute is {v} minutes now [ugh|somehow|lol]"],
        "ask": ["How long is {who}'s commute now?", "How many minutes does {who}'s commute take these days?"],
        "echo": ["{name} commutes {v} minutes each way by bike, madness"],
    },
    {
        "key": "team",
        "values": ("count", 4, 14),
        "say0": ["my team is {v} people now, [with the new intern|after the reshuffle]"],
        "sayn": ["[two more joined|we lost a couple], team is {v} people [now|as of this week]",
                 "reorg again: I manage {v} people now. [send help|fine, actually]"],
        "ask": ["How many people are on {who}'s team now?", "How big is {who}'s team now?"],
        "echo": ["{name}'s team is {v} people and they still can't ship anything"],
    },
    {
        "key": "gym",
        "values": ("money", 25, 75, 1),
        "say0": ["gym is {v} a month, [off-peak|with the pool|student discount lol]"],
        "sayn": ["gym put the membership up to {v}. [cancelling|still cheaper than therapy]",
                 "switched plans, paying {v} a month for the gym now"],
        "ask": ["How much does {who} pay for the gym now?", "What does {who}'s gym membership cost now?"],
        "echo": ["the gym near {name} is {v}, with a sauna"],
    },
]  # fmt: skip

# -- said, then corrected a few messages later ------------------------------------------------------
CORRECT = [
    {
        "key": "bank",
        "values": ("weekday",),
        "say": ["meeting with the bank is on {v} at [10|11:30|2]", "bank appointment {v}, [finally|fingers crossed]"],
        "fix": ["wait no, I misread the email, the bank meeting is {v}", "correction: bank moved it to {v}"],
        "ask": ["When is {who}'s meeting with the bank?", "On which day is {who} seeing the bank?"],
    },
    {
        "key": "flight",
        "values": ("clock",),
        "say": ["my flight home leaves at {v}", "flight's at {v}, [need to leave by|taxi booked for] [6|4:30|noon]"],
        "fix": ["ugh sorry, flight is actually at {v}, I was looking at the outbound", "*{v}, not what I said. long day"],
        "ask": ["What time does {who}'s flight leave?", "When is {who}'s flight?"],
    },
    {
        "key": "party",
        "values": ("date",),
        "say": ["housewarming is on the {v}, [bring nothing|bring a chair lol]", "party's the {v}, save the date"],
        "fix": ["change of plan, housewarming is the {v} instead, [landlord thing|mum's visiting]", "sorry, the {v}! got my dates mixed up"],
        "ask": ["What date is {who}'s housewarming party?", "When is {who}'s housewarming?"],
    },
]  # fmt: skip

# -- things gathered over several sessions ---------------------------------------------------------
SETS = [
    {
        "key": "plants",
        "items": ["tomatoes", "mint", "chillies", "strawberries", "basil", "sweet peas", "runner beans", "a lemon tree"],
        "say": ["planted {v} on the balcony [today|this morning|finally]", "the balcony now has {v} [too|as well], it's a jungle",
                "[added|put in] {v} [in the big pot|by the railing]. [fingers crossed|pigeons beware]"],
        "ask": ["What has {who} planted on the balcony?", "Which plants are in {who}'s balcony garden?"],
        "para": ["What is growing outside on {who}'s little terrace?"],
        "echo": ["{name} grows {v} and gives them to everyone", "{v} at the garden centre were half price"],
    },
    {
        "key": "furniture",
        "items": ["a green velvet sofa", "an oak dining table", "a standing desk", "a king-size bed", "a bookshelf from the flea market", "two bar stools"],
        "say": ["bought {v} for the new place", "{v} arrived [today|this afternoon]! [assembly hell|only one screw missing]",
                "[got|picked up] {v} [on marketplace|in the sale|from IKEA], new flat is getting there"],
        "ask": ["What furniture has {who} bought for the new flat?", "Which pieces of furniture did {who} get for the new place?"],
        "echo": ["{name} has {v} exactly like that", "there's {v} left on the street by the bins"],
    },
    {
        "key": "games",
        "items": ["Wingspan", "Azul", "Catan", "Carcassonne", "Codenames", "Ticket to Ride", "Cascadia"],
        "say": ["bought {v}, games night at mine!", "added {v} to the board game shelf [lol|, problem|, no regrets]",
                "{v} arrived, [rules look complicated|played three rounds already]"],
        "ask": ["Which board games has {who} bought?", "What board games did {who} add to the collection?"],
        "echo": ["{name} always wins at {v}", "is {v} any good with two people?"],
    },
    {
        "key": "gigs",
        "items": ["Fontaines D.C.", "Khruangbin", "Bon Iver", "Arlo Parks", "Wet Leg", "Nils Frahm"],
        "say": ["saw {v} last night, [unreal|my ears are still ringing|so good]", "{v} gig was [amazing|too short|sweaty but worth it]"],
        "ask": ["Which bands has {who} seen live?", "Which concerts did {who} go to?"],
        "echo": ["{name} has tickets for {v} but can't go", "{v} are touring again"],
    },
]  # fmt: skip

# -- a person introduced by relation, a fact about them later by name only (two hops) --------------
ROLES = [  # (as said, as asked, gender of the person or "" for either)
    ("sister", "sister", "f"), ("brother", "brother", "m"), ("neighbour", "neighbour", ""), ("manager", "manager", ""),
    ("daughter", "daughter", "f"), ("son", "son", "m"), ("old uni flatmate", "old university flatmate", ""),
    ("landlady", "landlady", "f"),
]  # fmt: skip
INTRO = [
    "my {role} {name} is [coming over|staying with us|visiting] [this weekend|on friday], [so the flat is a mess|send help|should be nice]",
    "[had lunch with|bumped into|finally called] my {role} {name} [today|yesterday], [long story|we talked for hours|same old]",
    "[ugh|so] my {role}, {name}, [keeps texting me memes|borrowed my drill again|says hi]",
]  # fmt: skip
HOPS = [
    {"key": "moved", "values": ["Lisbon", "Glasgow", "Rotterdam", "Montreal", "Leeds", "Hobart", "Bergen"],
     "say": ["{name} moved to {v}! [packed the van on sunday|job thing|nobody saw it coming]", "{name} has officially moved to {v}, [visit soon?|flat looks tiny]"],
     "ask": ["Which city did {who}'s {role} move to?", "Where did {who}'s {role} relocate?"]},
    {"key": "opened", "values": ["a bike repair shop", "a tiny bakery", "a record shop", "a plant shop", "a dumpling stall"],
     "say": ["{name} opened {v} [on the high street|in the old bank building|by the market]!", "[went to|popped into] {name}'s new place today, {v}, it's [buzzing|cute|empty but early days]"],
     "ask": ["What did {who}'s {role} open?", "What kind of business does {who}'s {role} run?"]},
    {"key": "instrument", "values": ["the cello", "the drums", "the trumpet", "the ukulele", "the harp"],
     "say": ["{name} started learning {v} and practises [at 7am|every evening|in the bathroom]", "{name} has taken up {v}, [pray for the neighbours|actually sounds ok]"],
     "ask": ["Which instrument is {who}'s {role} learning?", "What instrument did {who}'s {role} take up?"]},
    {"key": "hired", "values": ["the fire brigade", "a vet practice", "the city council", "a bakery chain", "the airport"],
     "say": ["{name} got a job at {v}! [starts monday|so proud]", "{name} works at {v} now, [night shifts though|loves it]"],
     "ask": ["Where does {who}'s {role} work now?", "Which place hired {who}'s {role}?"]},
]  # fmt: skip

# -- events of one kind on several dates: asked by time ----------------------------------------------
SERIES = [
    {"key": "restaurant", "values": ["Osteria Lupa", "Golden Lotus", "The Salt Room", "Bistro Anvers", "Mama Kwan's",
                                      "El Faro", "Ruby's Diner", "Tandoor House", "Sushi Hana"],
     "say": ["tried {v} [tonight|for dinner] [with work lot|with the family|on a date], [10/10|meh|portions tiny]",
             "[we finally went to|dinner at] {v}. [the dessert!!|overpriced|would go back]"],
     "ask": ["Which restaurant did {who} try {when}?", "Where did {who} go out to eat {when}?"],
     "mixed": ["Which restaurant did {who} try in {zh_when}?"]},
    {"key": "race", "values": ["the Riverside 10k", "a trail half in the hills", "the city parkrun", "the Harbour 5 mile",
                                "a muddy cross-country", "the Bridge to Bridge 10k"],
     "say": ["ran {v} [this morning|today] in [49:20|52:10|27:45|1:58:03]. [dead|happy with that|hills were brutal]",
             "did {v} [yesterday|on sunday], [new course record for me|slow but fun|rained the whole time]"],
     "ask": ["Which race did {who} run {when}?", "What run did {who} do {when}?"],
     "mixed": ["Which race did {who} run in {zh_when}?"]},
    {"key": "viewing", "values": ["a flat on Alder Street", "a two-bed above the bakery", "a terrace on Quarry Lane",
                                   "a new build by the canal", "a maisonette on Fern Road"],
     "say": ["viewed {v} [today|after work]. [damp everywhere|actually lovely|the agent was a nightmare]",
             "[saw|went round] {v}, [too small|bidding war already|we might offer]"],
     "ask": ["Which property did {who} view {when}?", "What place did {who} look at {when}?"],
     "mixed": ["Which flat did {who} view in {zh_when}?"]},
    {"key": "exam", "values": ["the driving theory test", "the B2 Spanish exam", "the first aid certificate", "the AWS cloud exam", "the CELTA interview"],
     "say": ["passed {v}!!! [first try|barely|with a day to spare]", "sat {v} [this morning|today], [think it went ok|brain is mush]"],
     "ask": ["Which exam did {who} sit {when}?", "What test did {who} take {when}?"],
     "mixed": ["Which exam did {who} sit in {zh_when}?"]},
]  # fmt: skip

# -- small talk that shares the facts' vocabulary ----------------------------------------------------
SLOTS = {
    "food": ["lasagne", "ramen", "a curry", "tacos", "leftover pizza", "soup", "a sad salad", "pancakes", "dumplings"],
    "show": ["that heist series", "the baking show", "the new detective thing", "a documentary about octopuses", "the football"],
    "day": ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"],
    "place": ["the market", "the park", "the pub on the corner", "the station", "the garden centre", "the library", "the bakery"],
    "thing": ["the washing machine", "my laptop", "the wifi", "the kettle", "my bike", "the car", "the boiler", "my phone"],
    "time": ["7", "half 6", "8:15", "noon", "10ish", "quarter to 9"],
    "num": ["3", "12", "40", "2", "15", "250", "6"],
}  # fmt: skip
# a thread of small talk: one opener, a reply, then follow-ups from either side
TOPICS = {
    "food": {
        "open": ["what are you having for dinner", "dinner plans?", "[I'm|so] hungry [lol|and there's nothing in the fridge]",
                 "[made|attempted] {food} [tonight|for lunch], [nailed it|it was a disaster|not bad]", "is {place} still doing the [lunch deal|two for one]?"],
        "reply": ["{food}, [again|probably|if I can be bothered]", "[leftovers|cereal lol|whatever's in the freezer]", "[jealous|sounds good|lol same]",
                  "[ooh|nice], [send the recipe|save me some|how long did it take]", "[no idea|think so|they stopped it]"],
        "more": ["[I could murder|craving] {food} [right now|tbh]", "[we should|let's] [cook together|do a potluck] [sometime|on {day}]",
                 "[the|that] [new|little] place by {place} [does|has] amazing {food}", "[I'm|trying to be] [eating better|off sugar] [this month|lol]",
                 "[ordered|got] takeaway [twice|three times] this week, [shameful|no regrets]"],
    },
    "tv": {
        "open": ["did you watch {show}?", "[I need|give me] a new show", "[finished|binged] {show} [last night|in one go]"],
        "reply": ["[not yet, no spoilers|yes!! the ending|fell asleep halfway]", "{show}?", "[how was it|was it good|I gave up after episode 2]"],
        "more": ["[the|that] [second|last] episode [though|was so tense]", "[my mum|{name}] [keeps recommending|hates] it",
                 "[it's|it was] [too long|perfect|kind of slow at first]", "[no spoilers|don't tell me], I'm on episode [2|4|6]"],
    },
    "weather": {
        "open": ["[it's|it is] [pouring|boiling|freezing|so windy] [here|outside|today]", "[is it|was it] [raining|sunny] [where you are|at yours]?",
                 "[forecast says|apparently] [snow|a heatwave|storms] [on {day}|this weekend]"],
        "reply": ["[same|ugh|sun's out here lol]", "[no|yes], [grey but dry|lovely actually|miserable]", "[great|typical|of course it does]"],
        "more": ["[got soaked|forgot my umbrella|burnt my nose] [on the way home|at lunch]", "[the garden|my washing] [needs it|is ruined] [lol|]"],
    },
    "work": {
        "open": ["[meetings all day|my boss is on one|big deadline] [today|tomorrow|this week]", "[work is|the office is] [chaos|dead quiet|fine I guess]",
                 "[had|got] [my review|a new project|two new tickets] [today|this morning]"],
        "reply": ["[ugh|sorry|hang in there]", "[same here|lucky you|at least it's {day}]", "[how did it go|what happened|and?]"],
        "more": ["[the printer|the coffee machine|the vpn] is broken [again|AGAIN|lol]", "[someone|{name}] [microwaved fish|booked a 5pm meeting|replied all]",
                 "[I'm|we're] [working late|on call] [till {time}|this weekend]", "[it went|it was] [fine|better than expected|awful], [tell you later|long story]"],
    },
    "plans": {
        "open": ["[want to|shall we] [get coffee|go for a walk|grab a drink] on {day}?", "[anything on|free] this weekend?", "[are we still on|still good] for {day}?"],
        "reply": ["[can't on {day}|yes!|maybe], [how about after work|{time}?|I'll text you]", "[not really|family thing on saturday|free sunday]",
                  "[yep|yes|might be late], [{time} at {place}?|see you there]"],
        "more": ["[deal|ok|perfect]", "[actually|sorry] can we [make it|push it to] {time}?", "[I'll bring|bring] [snacks|the cards|an umbrella]",
                 "[let's say|ok] {place} at {time}", "*{time}, [typo|sorry|fat fingers]"],
    },
    "chores": {
        "open": ["{thing} is broken [again|AGAIN|lol]", "[spent|wasted] [all morning|the whole day] [cleaning|sorting the loft|doing laundry]",
                 "[the|our] [kitchen|bathroom] [needs|is getting] a [deep clean|new tap|repaint]"],
        "reply": ["[noooo|classic|have you tried turning it off and on]", "[productive|rather you than me|send some motivation]", "[call someone|youtube it|leave it lol]"],
        "more": ["[obviously|lol yes|not funny]", "[the man|someone] is coming on {day} [between 8 and 6|apparently]", "[found|lost] [{num} socks|the remote|my keys] [behind the sofa|somewhere]"],
    },
    "family": {
        "open": ["[mum|dad|my brother|my gran] [called|rang] [for an hour|twice today|about christmas]", "[family|cousins] [lunch|bbq] on {day}, [pray for me|should be nice]"],
        "reply": ["[how is she|how are they|all ok?]", "[ha|good luck|bring wine]", "[aww|classic|lol]"],
        "more": ["[she|he] [wants|asked] [to know when I'm visiting|about my love life|for a lift]", "[they're|everyone's] [fine|driving me mad|asking after you]",
                 "[my nephew|{name}'s kid] [is|turned] [{num}|so big] [already|now]"],
    },
    "money": {
        "open": ["[council tax|the electric bill|my phone bill] [went up|arrived] [again|today|ugh]", "[trying to|need to] [save|spend less] this month"],
        "reply": ["[same|everything's so expensive|ouch]", "[good luck|me too|no takeaway then]"],
        "more": ["[it's|that's] [{num} quid|{num}0 quid] [more|a month] [than last year|now]", "[cancelled|paused] [netflix|the gym|two subscriptions] [lol|, saving already]"],
    },
    "sport": {
        "open": ["[went|dragged myself] [for a run|to yoga|swimming] [this morning|after work]", "[the match|the game] [on {day}|last night] [!!|was painful|though]"],
        "reply": ["[proud of you|how far|nice!]", "[don't|ugh], [the referee|that last minute goal|the defence]", "[I'm|you're] [so unfit|a machine] [lol|]"],
        "more": ["[only|like] [{num}k|{num} minutes|{num} lengths] [but still|lol|before I gave up]", "[legs|arms] [are dead|ache] [today|now]"],
    },
    "misc": {
        "open": ["[do you remember|what was] the name of that [film|band|cafe] we [liked|talked about]?", "[lol|haha] [look at this|this is us]",
                 "[quick question|random q]: [do you still have|can I borrow] [your drill|the big pan|the camping stove|that book]?",
                 "[have you seen|did you see] the news about {place}?", "[went to|walked past] {place} [earlier|today], [so busy|closed for some reason|they've redone it]"],
        "reply": ["[no idea|the one with the dog?|starts with an M I think]", "[dead|accurate|I'm crying]", "[sure|yes of course|it's at my mum's], [come grab it|{day}?]",
                  "[no what|yeah, wild|ugh yes]", "[oh really|huh|nice]"],
        "more": ["[that's it|no...|never mind, got it]", "[they're closing it|new owners apparently|big queue all day]", "[thanks!|legend|I'll bring it back on {day}]"],
    },
}  # fmt: skip
GREET = [
    "[morning!|hey|hiya|you around?|evening]",
    "[yep|here|hey hey], [what's up|just made coffee|on the train|just got in]",
]
SHORT = ["lol", "haha", "ok", "yep", "no way", "omg", "nice!!", "ugh", "same", "true", "👍", "😂", "sure", "hmm", "fair", "wait what", "ahh", "ok cool", "exactly", "ha"]  # fmt: skip
LONG = {
    "open": ["[so|ok so|right so] [today was|this week has been] [a lot|chaos|weirdly nice]", "[long message incoming|sorry for the essay|ok rant time]",
             "[you won't believe|guess] what happened [today|this morning]", "[update on my life|quick update]"],
    "mid": ["[the train was|the bus was] [late again|cancelled|packed] and I [stood the whole way|missed my meeting|got a seat for once]",
            "[then|and then] {thing} [died|started making a noise|decided to update itself]",
            "I ended up [making {food}|ordering {food}|eating {food} standing up] [at 10pm|in the kitchen|over the sink]",
            "[I ran into|I saw] {name} at {place}, [we chatted for ages|awkward|she looks great]",
            "[I keep thinking about|can't stop thinking about] {show}",
            "[spent|wasted] [an hour|half the evening|{num} quid] on [the phone with the bank|a parcel that never came|a bus that never showed]",
            "[the neighbours|someone upstairs] [had a party till 3|started drilling at 8|are moving out]",
            "[my manager|{name}] [cancelled|moved] [our 1:1|the team lunch] [again|to {day}]",
            "[it rained|it was sunny for once] so I [walked home|sat in the park|stayed in]"],
    "close": ["[anyway|whatever], [tomorrow will be better|that's my life|how are you]", "[how was yours?|tell me something nice|ok that's it]", "[lol|sigh|ugh]"],
}  # fmt: skip
LISTS = [
    ("shopping list for [saturday|tomorrow|the weekend]:", ["eggs", "oat milk", "2 lemons", "basil", "bin bags", "coffee", "rice", "{num} apples", "washing-up liquid", "bread"]),
    ("[todo|to do] [before friday|this week|today]:", ["call the bank", "return the parcel", "book the dentist", "fix {thing}", "email the landlord", "pay the council tax", "birthday card for mum"]),
    ("packing list [lol|for the weekend]:", ["charger", "swimsuit", "the good socks", "passport", "snacks", "rain jacket", "book"]),
]  # fmt: skip
BYE = [
    "[ok gotta go|right, off to bed|speak soon|night!|ttyl|anyway, back to work]",
    "[night|bye!|later|xx|👋|speak tomorrow]",
]
