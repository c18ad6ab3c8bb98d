"""Real-looking values for parameters named by a common noun (a `team`, a `museum`, a `gene`, a
`cuisine`): the offline value writer's answer when a parameter has no shape of its own and its
description gives no example. Our own short lists; `lexicon_value` finds the list by the key's
head noun (`team1`, `team_name`, `original_ingredient` -> team, team, ingredient).
"""

from __future__ import annotations

import random
import re

from ..core.records import Tool
from ..core.text import split_words

_TABLE = """
league: Premier League|La Liga|Bundesliga|Serie A|NBA|NFL|MLB|NHL|Ligue 1|Eredivisie|MLS|IPL|EuroLeague
team: Milwaukee Bucks|Denver Nuggets|Miami Heat|Borussia Dortmund|Inter Milan|Atletico Madrid|Chelsea|Tottenham Hotspur|Celtic|Benfica|Porto|Boston Red Sox|Los Angeles Dodgers|Green Bay Packers|Dallas Cowboys|Montreal Canadiens|Phoenix Suns|Sacramento Kings|Manchester United|Real Madrid|Los Angeles Lakers|Golden State Warriors|Bayern Munich|Boston Celtics|Chicago Bulls|Arsenal|FC Barcelona|Juventus|New York Yankees|Kansas City Chiefs|Liverpool|Paris Saint-Germain|Toronto Raptors|Ajax
player: Luka Doncic|Jayson Tatum|Mohamed Salah|Kevin De Bruyne|Aryna Sabalenka|Carlos Alcaraz|Nikola Jokic|Sam Kerr|Rohit Sharma|Joe Root|LeBron James|Lionel Messi|Serena Williams|Stephen Curry|Virat Kohli|Erling Haaland|Naomi Osaka|Giannis Antetokounmpo|Megan Rapinoe|Kylian Mbappe|Shohei Ohtani|Novak Djokovic
platform: PC|PlayStation 5|Xbox Series X|Nintendo Switch|iOS|Android|Steam Deck
game: The Legend of Zelda Breath of the Wild|Minecraft|Fortnite|Elden Ring|Stardew Valley|Hades|Chess|Catan|Among Us|Red Dead Redemption 2|Tetris|Celeste|Monopoly|Ticket to Ride
species: gray wolf|bald eagle|African elephant|monarch butterfly|green sea turtle|snow leopard|red fox|humpback whale|honey bee|koala
religion: Buddhism|Christianity|Islam|Hinduism|Judaism|Sikhism|Shinto|Jainism
genre: jazz|science fiction|mystery|hip hop|classical|fantasy|indie rock|documentary|thriller|reggae|historical fiction|soul
category: electronics|books|home and garden|toys|sports equipment|groceries|office supplies|clothing|beauty|music
artist: Vincent van Gogh|Frida Kahlo|Claude Monet|Pablo Picasso|Georgia O'Keeffe|Miles Davis|Nina Simone|Radiohead|Yayoi Kusama|Hokusai|Taylor Swift|Rembrandt
unit: cups|grams|ounces|tablespoons|liters|kilograms|miles|kilometers|pounds|milliliters|teaspoons|inches
state: California|Texas|New York|Florida|Washington|Illinois|Colorado|Oregon|Massachusetts|Georgia|Arizona
season: 2022-2023|2023-2024|2021-2022|2024-2025|2019-2020|summer|winter|spring
destination: Seville|Porto|Edinburgh|Hanoi|Lima|Oaxaca|Tbilisi|Valletta|Ljubljana|Queenstown|Zanzibar|Quebec City|Cartagena|Hoi An|Bergen|Paris|Tokyo|Rome|Barcelona|Lisbon|Kyoto|Cape Town|Reykjavik|Vancouver|Marrakech|Sydney|Buenos Aires
function: x**4 - 2x**2|cos(x) + x/2|1/(1 + x**2)|5x**2 - 3x + 7|sqrt(x) + 2|x*exp(x)|3x**2 + 2x - 1|sin(x) * x|x**3 - 4x|2x + 5|exp(-x)|x**2 - 9|log(x) + 1
specialization: cardiology|pediatrics|dermatology|orthopedics|neurology|family law|divorce|criminal defense|immigration|oncology
subject: Physics|World History|Algebra|Biology|Spanish|Chemistry|Economics|Literature
discovery: penicillin|theory of relativity|DNA double helix|gravity|radioactivity|electricity|evolution|vaccination
property: apartment|villa|condo|townhouse|single family home|studio|cottage
database: customers|sales_2024|inventory|analytics|hr_records|orders_db|marketing
table: employees|orders|customers|products|invoices|transactions|students|shipments
product: wireless earbuds|espresso machine|standing desk|running shoes|air fryer|mechanical keyboard|yoga mat|electric toothbrush
material: steel|aluminum|oak wood|copper|concrete|glass|titanium|cotton|marble
museum: Louvre Museum|British Museum|Metropolitan Museum of Art|Rijksmuseum|Museo del Prado|Uffizi Gallery|Smithsonian|Tate Modern|MoMA|Vatican Museums
competition: FIFA World Cup|UEFA Champions League|Wimbledon|Tour de France|Olympic Games|Super Bowl|NBA Finals|Copa America
cuisine: Italian|Japanese|Mexican|Thai|Indian|Ethiopian|Lebanese|Vietnamese|Greek|Korean|Peruvian
room: deluxe|suite|single|double|king|twin|family room|standard
event: Battle of Hastings|French Revolution|moon landing|fall of the Berlin Wall|signing of the Magna Carta|Boston Tea Party|storming of the Bastille|D-Day
brand: Fender|Gibson|Yamaha|Nike|Adidas|Toyota|Apple|Samsung|Canon|Bosch
model: Stratocaster|Les Paul|Model 3|Corolla|MacBook Air|Galaxy S24|EOS R6|Civic
county: Los Angeles County|Cook County|King County|Travis County|Orange County|Miami-Dade County|Harris County
ecosystem: Amazon rainforest|Great Barrier Reef|Serengeti|Yellowstone|Sahara|Arctic tundra|Everglades
war: World War II|American Civil War|Hundred Years War|Napoleonic Wars|Korean War|War of 1812|Peloponnesian War
leader: Abraham Lincoln|Winston Churchill|Napoleon Bonaparte|Queen Victoria|Julius Caesar|Nelson Mandela|Catherine the Great
battle: Battle of Waterloo|Battle of Gettysburg|Battle of Stalingrad|Battle of Hastings|Battle of Agincourt|Battle of Midway|Battle of Thermopylae
sculpture: The Thinker|David|Venus de Milo|The Kiss|Winged Victory of Samothrace|Pieta|Bird in Space
route: Route 66|Pacific Coast Highway|Trans-Siberian Railway|Camino de Santiago|Great Ocean Road|Ring Road
book: To Kill a Mockingbird|Pride and Prejudice|The Great Gatsby|One Hundred Years of Solitude|1984|Beloved|Dune|The Hobbit|Things Fall Apart|Moby-Dick
substance: caffeine|ethanol|sodium chloride|glucose|aspirin|water|nitrogen|carbon dioxide
planet: Mars|Jupiter|Saturn|Venus|Neptune|Mercury|Uranus
era: Renaissance|Victorian era|Bronze Age|Jurassic|Middle Ages|Industrial Revolution|Cretaceous|Baroque
condition: diabetes|asthma|hypertension|migraine|arthritis|eczema|insomnia
card: Ace of Spades|King of Hearts|Queen of Diamonds|Jack of Clubs|Ten of Hearts
expertise: divorce|intellectual property|tax law|real estate|employment law|immigration|estate planning
artwork: Mona Lisa|The Starry Night|The Night Watch|Girl with a Pearl Earring|The Persistence of Memory|Guernica|The Birth of Venus|The Scream
attraction: museum|theme park|beach|national park|zoo|historic site|botanical garden|aquarium
festival: Glastonbury|Coachella|Oktoberfest|Rio Carnival|Edinburgh Fringe|Fuji Rock|Primavera Sound
ingredient: butter|eggs|all-purpose flour|sugar|whole milk|olive oil|chicken breast|tofu|heavy cream|honey|basmati rice
car: SUV|sedan|compact|convertible|minivan|electric|hatchback
hotel: Hilton Garden Inn|Marriott Marquis|Hotel Arts|The Ritz|Holiday Inn Express|Park Hyatt|Ibis Centre
airline: Delta|Lufthansa|Emirates|British Airways|Air France|Qantas|Singapore Airlines|KLM|United
class: economy|premium economy|business|first
stock: AAPL|MSFT|GOOGL|AMZN|TSLA|NVDA|Apple|Microsoft|Tesla|Amazon
law: criminal|civil|family|corporate|environmental|intellectual property|tax
finish: rosewood|maple|natural|sunburst|matte black|gloss|ebony|walnut
molecule: ATP|glucose|hemoglobin|DNA|insulin|cholesterol|RNA polymerase
organelle: mitochondria|nucleus|ribosome|Golgi apparatus|chloroplast|lysosome|endoplasmic reticulum
color: red|blue|yellow|green|purple|orange|teal|magenta
art: sculpture|painting|photography|printmaking|ceramics|watercolor|calligraphy
compartment: mitochondria|nucleus|cytoplasm|plasma membrane|Golgi apparatus|endoplasmic reticulum
medium: oil on canvas|watercolor|charcoal|acrylic|bronze|marble|digital
food: pizza|sushi|tacos|salad|burger|ramen|curry|falafel
actor: Meryl Streep|Denzel Washington|Tom Hanks|Viola Davis|Leonardo DiCaprio|Cate Blanchett|Song Kang-ho|Penelope Cruz
invention: telephone|light bulb|printing press|steam engine|airplane|radio|telescope|World Wide Web
recipe: vegan lasagna|chicken tikka masala|banana bread|mushroom risotto|beef stew|pad thai|shakshuka|lentil soup
docket: 2:21-cv-04512|1:22-cr-00187|3:20-cv-01134|4:23-cv-00891|5:19-cr-00345
court: Supreme Court|Court of Appeals|District Court|High Court|Ninth Circuit|Family Court
park: Yellowstone National Park|Yosemite National Park|Banff National Park|Central Park|Kruger National Park|Zion National Park
gene: BRCA1|TP53|CFTR|APOE|EGFR|MYC|HBB|BRCA2
fuel: gasoline|diesel|electric|hybrid|natural gas|coal|solar
sign: Aries|Taurus|Gemini|Leo|Virgo|Libra|Scorpio|Pisces|Capricorn
sport: tennis|basketball|soccer|cricket|golf|swimming|cycling|rugby|baseball
building: Empire State Building|Sydney Opera House|Burj Khalifa|Eiffel Tower|Colosseum|Taj Mahal|Flatiron Building
scientist: Marie Curie|Albert Einstein|Isaac Newton|Charles Darwin|Rosalind Franklin|Nikola Tesla|Ada Lovelace|Galileo Galilei
diet: vegan|vegetarian|gluten-free|keto|paleo|low-sodium|pescatarian
meal: breakfast|lunch|dinner|brunch|snack|dessert
energy: solar|wind|hydroelectric|geothermal|nuclear|biomass
element: hydrogen|oxygen|carbon|iron|gold|helium|uranium|neon|copper|silicon
song: Bohemian Rhapsody|Imagine|Hey Jude|Respect|Purple Rain|Hotel California|Billie Jean|Like a Rolling Stone|Smells Like Teen Spirit
instrument: piano|acoustic guitar|violin|electric guitar|drums|cello|saxophone|ukulele|flute
author: Toni Morrison|Gabriel Garcia Marquez|Jane Austen|Haruki Murakami|Chinua Achebe|George Orwell|Ursula K. Le Guin
movie: Inception|Parasite|Spirited Away|The Godfather|Casablanca|Amelie|Pulp Fiction|Interstellar
composer: Beethoven|Mozart|Bach|Chopin|Debussy|Tchaikovsky|Vivaldi
variable: income|age|house price|temperature|sales volume|hours studied|rainfall|test score
dataset: sales_data.csv|customer_churn|housing_prices|iris|weather_2024|web_traffic
cell: neuron|red blood cell|stem cell|muscle cell|epithelial cell
animal: golden retriever|siamese cat|bald eagle|dolphin|red panda|kangaroo
playlist: Sunday Morning Coffee|Road Trip 2026|Gym Rotation|Dinner Party Jazz|Focus Mode|Summer Nights|Running 10K|Throwback Thursdays|Kitchen Dance Party|Late Night Drive
label: bug|enhancement|documentation|performance|needs-triage|regression|good first issue|help wanted
grocery: organic bananas|almond milk|sourdough bread|free-range eggs|avocados|greek yogurt|brown rice|cheddar cheese
topic: climate change|artificial intelligence|elections|space exploration|renewable energy|public health|electric vehicles|inflation
role: Finance Approver|Read Only|Project Admin|Billing Viewer|Editor|Report Author|Team Lead|Auditor
job: Senior Data Engineer|Product Designer|Payroll Specialist|Customer Success Manager|Backend Developer|Warehouse Supervisor|Financial Analyst|Recruiting Coordinator|Office Manager
purpose: client workshop|quarterly business review|supplier audit|trade fair visit|team offsite|customer onboarding|conference talk|site inspection
entity: Apple Inc|United Nations|World Health Organization|Tesla|NASA|European Union
""".strip()

LEXICON: dict[str, list[str]] = {h.strip(): [str(x) for x in v.strip().split("|")] for h, _, v in (line.partition(":") for line in _TABLE.splitlines())}
# head nouns that name the same thing as a table
ALIASES = {"teams": "team", "db": "database", "players": "player", "room": "room", "roomtype": "room",
           "propertytype": "property", "recipename": "recipe", "mainingredient": "ingredient", "cartype": "car",
           "hotelname": "hotel", "flightclass": "class", "var": "variable", "sculptures": "sculpture",
           "artworks": "artwork", "attractiontype": "attraction", "actors": "actor", "ingredients": "ingredient",
           "games": "game", "leagues": "league", "books": "book", "songs": "song", "artists": "artist",
           "units": "unit", "foods": "food", "place": "destination", "city": "destination", "painting": "artwork",
           "sportsteam": "team", "club": "team", "vehicle": "car", "course": "subject", "athlete": "player", "spot": "building", "landmark": "building", "groceries": "grocery", "func": "function", "end": "destination", "start": "destination", "point": "destination",
           "company": "entity", "organization": "entity", "player_name": "player", "molecules": "molecule",
           "zodiac": "sign", "instruments": "instrument", "film": "movie", "films": "movie", "movies": "movie",
           "era_name": "era", "cuisines": "cuisine", "elements": "element", "genes": "gene", "planets": "planet"}
_GENERIC = {"name", "names", "id", "type", "title", "one", "two", "input", "string", "value", "s"}


# a team of the sport the tool is about: a basketball game's teams are basketball teams (the first
# sport its description names picks the list; 'football' alone is the game most of the world means)
_SPORT_TEAMS = [
    (r"american football|nfl", "Green Bay Packers|Dallas Cowboys|Kansas City Chiefs|Buffalo Bills|Philadelphia Eagles"),
    (r"basketball|nba", "Milwaukee Bucks|Denver Nuggets|Miami Heat|Phoenix Suns|Sacramento Kings|Los Angeles Lakers|"
                        "Golden State Warriors|Boston Celtics|Chicago Bulls|Toronto Raptors"),
    (r"baseball|mlb", "Boston Red Sox|Los Angeles Dodgers|New York Yankees|Chicago Cubs|Seattle Mariners"),
    (r"hockey|nhl", "Montreal Canadiens|Toronto Maple Leafs|Edmonton Oilers|Boston Bruins|Vancouver Canucks"),
    (r"soccer|football|premier league|la liga|champions league",
     "Borussia Dortmund|Inter Milan|Atletico Madrid|Chelsea|Tottenham Hotspur|Celtic|Benfica|Porto|Manchester United|"
     "Real Madrid|Bayern Munich|Arsenal|FC Barcelona|Juventus|Liverpool|Paris Saint-Germain|Ajax"),
]


def _table(head: str, context: str) -> list[str]:
    if head == "team" and (sport := re.search("|".join(rf"\b(?:{w})\b" for w, _ in _SPORT_TEAMS), context, re.I)):
        return next(teams.split("|") for w, teams in _SPORT_TEAMS if re.fullmatch(w, sport.group(0).lower()))
    return LEXICON[head]


def lexicon_value(key: str, rng: random.Random, tool: Tool | None = None) -> str | None:
    """A value from the table the key's head noun names (its last word that names a thing; digits
    and generic words such as 'name' or 'type' skipped), the sport the `tool`'s description names
    picking a team's; None when no table fits."""
    context = tool.description if tool else ""
    words = [re.sub(r"\d+$", "", w) for w in split_words(key)]
    joined = "".join(words)
    for w in [joined, *reversed([w for w in words if w and w not in _GENERIC])]:
        head = ALIASES.get(w, w)
        head = head if head in LEXICON else head[:-1] if head.endswith("s") and head[:-1] in LEXICON else ""
        if head:
            return rng.choice(_table(head, context))
    return None
