"""Words that name a kind of thing, with the words for things of that kind.

A question often names the kind ("how many pieces of jewelry did I buy", "which sports
have I played") where the memories name the things ("picked up a silver necklace",
"my volleyball team won"), an agent's question the kind of tool ("which database does
billing use") where its notes name the tool ("moved billing onto Postgres"): the two
share no word, and a search by words alone finds neither. Each kind here lends its
members to a question that names it, at half the weight of the question's own words
(:data:`MEMBER_WEIGHT`), so a record that names the kind itself still ranks first and
a member only lifts what would otherwise not be found.

One way only: a question that names a thing does not reach records that name its
kind (asked about "the dentist", a note about "a doctor's visit" is a guess, not an
answer). Members are single words of everyday English, left out where the word is as
often something else ("watch", "play", "show", "cold", "bass"). So are kinds whose
word is as often used another way or shares its stem with another word: "event"
("which event came first"), "family" (a family sale), "holiday" (a trip, in British
English), "exercise" (a breathing exercise), "computer" (*compute*), "fitness"
(*fit*), "transport" (*transported*). A kind whose stem is another word's but whose
written form is not is matched as written (:data:`WORD_KINDS`: *relatives*, not
*related*).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

#: What a member found through its kind weighs, against 1 for the question's own words.
MEMBER_WEIGHT = 0.5

#: Each line: a kind (and words for the same kind, before the colon), then its members.
KINDS = """
doctor physician specialist: dentist dermatologist pediatrician therapist psychiatrist
  psychologist surgeon cardiologist optometrist ophthalmologist orthodontist chiropractor
  gynecologist neurologist physiotherapist allergist oncologist podiatrist urologist
  counselor nurse
pet: dog cat puppy kitten hamster rabbit bunny parrot goldfish turtle tortoise gerbil
  ferret lizard gecko iguana budgie cockatiel guinea
sport: soccer football basketball baseball tennis volleyball golf hockey rugby cricket
  swimming cycling badminton softball lacrosse skiing snowboarding surfing boxing
  wrestling climbing triathlon squash fencing rowing karate judo taekwondo gymnastics
instrument: guitar piano violin drums cello flute saxophone trumpet ukulele clarinet harp
  keyboard viola trombone banjo mandolin harmonica accordion
appliance: blender toaster oven microwave fridge refrigerator dishwasher washer dryer
  kettle mixer stove freezer fryer cooker smoker grill vacuum juicer processor
  espresso coffeemaker humidifier dehumidifier
furniture: sofa couch table chair desk bed dresser bookshelf bookcase wardrobe cabinet
  ottoman nightstand armchair recliner futon stool bench sideboard
jewelry: necklace ring bracelet earring pendant brooch anklet locket
clothing clothes outfit garment: shirt dress jeans jacket coat sweater skirt pants
  trousers blouse hoodie suit shorts scarf cardigan blazer vest leggings tights jumpsuit
shoe footwear: sneaker boot heel sandal loafer slipper
accessory: bag handbag purse belt scarf hat sunglasses wallet gloves necklace bracelet
  earring
drink beverage: coffee tea juice soda lemonade smoothie latte cappuccino espresso milk
  wine beer cocktail kombucha
cocktail: margarita mojito martini daiquiri negroni cosmopolitan manhattan sangria
  mimosa bellini spritz paloma gimlet
alcohol liquor booze: wine beer whiskey whisky vodka gin rum tequila champagne
  bourbon sake cider brandy mezcal prosecco
fruit: apple banana orange strawberry blueberry grape mango pineapple peach pear
  cherry watermelon lemon lime kiwi avocado raspberry plum apricot papaya melon fig
vegetable veggie: tomato cucumber carrot lettuce spinach kale broccoli onion potato
  zucchini squash eggplant cabbage cauliflower peas celery asparagus beet radish
  pumpkin corn
herb: basil mint rosemary thyme parsley cilantro oregano sage dill chives
flower: rose tulip lily daisy sunflower orchid peony lavender daffodil hydrangea
  marigold carnation begonia dahlia
dessert: cake pie cookie brownie pudding cheesecake tart cupcake muffin
  donut macaron tiramisu gelato sorbet
seafood: shrimp salmon tuna crab lobster oyster clam scallop mussel cod prawn
meat: beef pork chicken lamb turkey bacon steak sausage ham veal
meal: breakfast lunch dinner brunch supper
cook cooking: bake roast grill fry boil steam saute simmer barbecue
cuisine: italian mexican chinese japanese thai indian french korean greek vietnamese
  spanish ethiopian lebanese turkish
workout: yoga pilates running jogging cycling swimming weightlifting
  crossfit cardio zumba boxing rowing spinning
sibling: sister brother
parent: mother father mom dad
grandparent: grandmother grandma grandfather grandpa
commute: bus train subway metro taxi uber lyft tram ferry
  bike bicycle scooter carpool
vehicle: car truck van suv motorcycle bike bicycle scooter minivan sedan
accommodation lodging: hotel hostel airbnb motel resort inn
device gadget electronics: phone smartphone laptop tablet computer headphones earbuds
  smartwatch tv television camera speaker console kindle router printer
craft hobby: knitting crocheting sewing painting pottery woodworking embroidery
  quilting scrapbooking calligraphy drawing photography gardening baking
art artwork: painting drawing sculpture pottery sketch watercolor acrylic mural
language: spanish french german italian japanese chinese mandarin cantonese korean
  portuguese arabic russian hindi dutch python javascript typescript java kotlin swift
  golang rust ruby php scala haskell elixir cpp csharp fsharp
medication medicine drug: ibuprofen aspirin antibiotic tylenol insulin antihistamine
  inhaler vitamin supplement
illness sickness disease: flu fever covid allergy migraine infection asthma diabetes
  pneumonia bronchitis
injury: sprain fracture bruise concussion
celebration: birthday anniversary wedding graduation party
outdoor: hiking camping kayaking fishing biking climbing canoeing
subscription: netflix spotify hulu magazine newspaper membership
streaming: netflix hulu disney hbo spotify
social: instagram facebook twitter tiktok youtube linkedin pinterest snapchat reddit
  tumblr
property: house condo apartment bungalow townhouse cottage villa duplex cabin
degree: bachelor master phd mba doctorate diploma
color: red blue green yellow orange purple pink black white gray brown beige navy teal
  turquoise maroon lavender
fabric material: cotton wool silk leather linen denim polyester cashmere velvet suede
  nylon
gem gemstone: diamond ruby sapphire emerald pearl opal amethyst topaz garnet
metal: gold silver platinum copper bronze brass titanium steel
tree: oak maple pine birch willow cedar spruce elm redwood
houseplant: succulent cactus fern orchid monstera pothos ficus bonsai aloe ivy
bird: parrot eagle owl hawk robin sparrow pigeon crow hummingbird finch heron pelican
  flamingo penguin
insect: bee ant butterfly mosquito beetle wasp moth ladybug grasshopper dragonfly
breed: labrador retriever poodle beagle bulldog terrier husky corgi dachshund chihuahua
  spaniel pug rottweiler doberman greyhound siamese persian ragdoll sphynx bengal
genre: jazz rock pop classical blues folk reggae techno punk soul funk comedy drama
  thriller horror documentary romance fantasy mystery
snack: chips popcorn pretzels crackers nuts granola jerky
breakfast: cereal oatmeal pancake waffle toast bagel omelette granola yogurt
spice: cumin paprika turmeric cinnamon nutmeg cardamom ginger chili saffron
cheese: cheddar brie mozzarella parmesan feta gouda camembert ricotta gruyere
nut: almond cashew walnut pecan pistachio peanut hazelnut macadamia
grain: rice quinoa oats barley couscous bulgur farro
pasta: spaghetti penne lasagna ravioli fettuccine linguine macaroni gnocchi tortellini
bread: sourdough baguette bagel ciabatta brioche focaccia pita rye
coffee: latte cappuccino espresso americano mocha macchiato
car: toyota honda ford tesla bmw subaru audi mercedes volkswagen nissan hyundai kia
  mazda chevy jeep volvo lexus porsche
phone smartphone: iphone pixel galaxy android
laptop: macbook chromebook thinkpad
boat: kayak canoe sailboat yacht
bag: backpack tote purse handbag suitcase duffel clutch
dance: salsa tango ballet ballroom waltz foxtrot
martial: karate judo taekwondo jiujitsu aikido
investment: stock bond crypto bitcoin ethereum etf
crypto cryptocurrency: bitcoin ethereum dogecoin solana
database: postgres postgresql mysql mariadb sqlite mongodb redis cassandra dynamodb
  elasticsearch clickhouse snowflake bigquery
cloud: aws gcp azure heroku vercel netlify digitalocean cloudflare
container: docker podman kubernetes k8s containerd
browser: chrome firefox safari chromium brave
os: linux windows macos ubuntu debian fedora centos alpine android ios
framework: react vue angular svelte django flask fastapi rails laravel spring nextjs
queue broker: kafka rabbitmq sqs nats pubsub celery
editor ide: vscode vim neovim emacs intellij pycharm sublime
ci: jenkins circleci travis gitlab buildkite
monitoring observability: datadog grafana prometheus sentry newrelic pagerduty kibana
  splunk opsgenie honeycomb jaeger
linter: eslint ruff flake8 pylint prettier rubocop stylelint
bundler: webpack vite rollup esbuild
protocol: http https grpc websocket tcp udp mqtt amqp graphql
orm: sqlalchemy prisma hibernate activerecord sequelize typeorm
"""


#: Kinds found by the word as written, not its stem, where the stem is another word's
#: too: *relatives* and *related* are both *relat*.
WORD_KINDS = """
relative relatives: mother father mom dad sister brother son daughter aunt uncle cousin
  grandmother grandma grandfather grandpa niece nephew husband wife
"""


def _entries(text: str) -> Iterator[tuple[list[str], list[str]]]:
    """Each entry of ``text`` (a kind's words, a colon, its members; an indented line
    goes on the one before) as (kind words, members)."""
    for entry in text.replace("\n  ", " ").strip().splitlines():
        heads, _, members = entry.partition(":")
        yield heads.split(), members.split()


def word_members(stem: Callable[[str], str]) -> dict[str, tuple[str, ...]]:
    """Each word of :data:`WORD_KINDS` as written (lower case), with its members' stems."""
    found: dict[str, tuple[str, ...]] = {}
    for heads, members in _entries(WORD_KINDS):
        stems = tuple(dict.fromkeys(stem(m) for m in members))
        found.update((head, stems) for head in heads)
    return found


def member_stems(stem: Callable[[str], str]) -> dict[str, tuple[str, ...]]:
    """Each kind's stem, with its members' stems (``stem``: the stemmer for one word);
    a kind named by several words lends the same members to each, and each of those
    words to the others (a question about *doctors* reaches *my physician*)."""
    found: dict[str, dict[str, None]] = {}
    for heads, members in _entries(KINDS):
        own_stems = [stem(head) for head in heads]
        stems = [stem(m) for m in members] + own_stems
        for own in own_stems:
            found.setdefault(own, {}).update((s, None) for s in stems if s != own)
    return {head: tuple(members) for head, members in found.items()}
