"""Hand-written phrase bank for the sample and synthetic review datasets.

Every hotel aspect has a query-like ``name`` (as an expert review would
annotate it, e.g. ``"wi-fi"``), the ``terms`` that count as a mention of it
(the name plus close variants and synonyms such as ``"internet"``), and
positive, negative and neutral review sentences, each of which mentions at
least one of those terms and no term of any other aspect. Narrative sentences
(arrival, trip purpose, closing recommendation) mention no aspect at all, so a
mention count over generated reviews measures exactly what was planted.

Example:
    >>> from opinio_agents.datasets.phrases import ASPECTS, mentions
    >>> "wi-fi" in ASPECTS
    True
    >>> mentions("wi-fi", "The internet kept dropping.")
    True
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from opinio_agents.errors import ConfigError

__all__ = [
    "AspectPhrases",
    "ASPECTS",
    "OPENERS",
    "FILLER",
    "NON_NATIVE_FILLER",
    "CLOSERS_POSITIVE",
    "CLOSERS_NEGATIVE",
    "CLOSERS_MIXED",
    "ONE_LINERS_POSITIVE",
    "ONE_LINERS_NEGATIVE",
    "PREFIXES_POSITIVE",
    "PREFIXES_NEGATIVE",
    "PREFIXES_ANY",
    "EMOJI_POSITIVE",
    "EMOJI_NEGATIVE",
    "MISSPELLINGS",
    "CRITICAL_COMPLAINTS",
    "SLOTS",
    "aspect",
    "mention_pattern",
    "mentions",
]


@dataclass(frozen=True)
class AspectPhrases:
    """Review sentences about one aspect.

    Attributes:
        name: The query-like aspect name (``"breakfast buffet"``).
        terms: Lower-case surface forms that count as a mention (name first).
        positive: Sentences praising the aspect.
        negative: Sentences complaining about it.
        neutral: Factual sentences with no clear sentiment.
        expert_pro: A key-point style PRO, as an expert review would phrase it.
        expert_con: A key-point style CON.
    """

    name: str
    terms: tuple[str, ...]
    positive: tuple[str, ...]
    negative: tuple[str, ...]
    neutral: tuple[str, ...]
    expert_pro: str
    expert_con: str


def _a(
    name: str,
    terms: tuple[str, ...],
    positive: tuple[str, ...],
    negative: tuple[str, ...],
    neutral: tuple[str, ...],
    expert_pro: str,
    expert_con: str,
) -> AspectPhrases:
    return AspectPhrases(name, terms, positive, negative, neutral, expert_pro, expert_con)


_ASPECT_LIST: tuple[AspectPhrases, ...] = (
    _a(
        "wi-fi",
        ("wi-fi", "wifi", "wi fi", "internet"),
        (
            "The wi-fi was fast and reliable, I could stream in the evenings without a hiccup.",
            "Free wifi that actually works in every corner of the building, which is rarer than it should be.",
            "Internet was quick enough for a couple of video calls for work.",
            "Wi-fi: fast, free, no silly login page every day.",
            "I was pleasantly surprised by how strong the wifi signal was even on the top floor.",
            "Good internet connection, my husband was able to work remotely for the whole week.",
            "The wi-fi never dropped once during our stay.",
        ),
        (
            "The wi-fi was painfully slow and kept dropping every few minutes.",
            "They charge for wifi, which in this day and age is just ridiculous.",
            "Internet was basically unusable in the evenings when everyone was online.",
            "Wi-fi only worked in the corridor on our floor, not in the room itself.",
            "Had to log in to the wifi again every single day and the password never worked on the first try.",
            "Don't count on the internet if you need to work, I ended up using my phone as a hotspot.",
            "The so-called free wi-fi was limited to one device per room.",
        ),
        (
            "The wi-fi password is printed on the key card holder.",
            "There is wifi in the rooms and in the common areas.",
        ),
        "Fast, reliable Wi-Fi available throughout the property at no extra charge.",
        "Wi-Fi is slow and unreliable, and may require a fee.",
    ),
    _a(
        "breakfast buffet",
        ("breakfast buffet", "breakfast", "buffet"),
        (
            "The breakfast buffet was amazing, fresh fruit, eggs made to order and really good pastries.",
            "Breakfast was included and had a huge selection, we never ate lunch because of it.",
            "Loved the buffet in the morning, the omelette station alone is worth it.",
            "Great breakfast with local specialities as well as the usual continental stuff.",
            "The breakfast buffet was constantly refilled even at the busy times.",
            "Breakfast had options for everyone, my daughter is gluten free and she was well catered for.",
            "Best breakfast we had on the whole trip, the pancakes were incredible.",
        ),
        (
            "The breakfast buffet was disappointing, cold eggs and the same few items every day.",
            "Breakfast was overpriced for what it was, basically toast and some sad looking cheese.",
            "By 9am the buffet was picked clean and nobody came to refill it.",
            "The breakfast area was chaotic, we queued for a table every morning.",
            "Breakfast is not included and at 25 euros per person it is not worth it.",
            "Coffee at breakfast was undrinkable and the juice tasted like it came from powder.",
            "The buffet hardly changed in six days, we got bored of it by day two.",
        ),
        (
            "Breakfast is served from 6:30 to 10:30 on the ground floor.",
            "We had breakfast at the hotel twice and ate out on the other days.",
        ),
        "Generous breakfast buffet with a wide variety of hot and cold options.",
        "Breakfast buffet is limited, repetitive and expensive for what is offered.",
    ),
    _a(
        "shuttle service",
        ("shuttle service", "shuttle"),
        (
            "The free shuttle to the airport was super convenient and always on time.",
            "Shuttle service into town runs every half hour, which made getting around so easy.",
            "The shuttle driver was lovely and even helped with our heavy bags.",
            "We used the shuttle every day, great service and it saved us a fortune on taxis.",
            "Airport shuttle was waiting for us when we landed at midnight, much appreciated.",
            "The shuttle service is the main reason we picked this place and it did not disappoint.",
        ),
        (
            "The shuttle was always full and we had to wait for the next one, 45 minutes later.",
            "Shuttle service stops at 10pm, so we had to get a cab back every night.",
            "The airport shuttle never showed up and we almost missed our flight.",
            "They advertise a free shuttle but it turns out you have to book it a day in advance.",
            "The shuttle was a rattly old van with broken seats.",
            "Shuttle timetable on the website was wrong, we waited outside for nothing.",
        ),
        (
            "There is a shuttle to the airport that you can book at the desk.",
            "The shuttle leaves from the main entrance.",
        ),
        "Free shuttle service to the airport and the town centre.",
        "Shuttle service is infrequent and unreliable.",
    ),
    _a(
        "pool",
        ("pool", "swimming pool"),
        (
            "The pool was gorgeous, warm water and plenty of sun loungers.",
            "Kids spent hours in the pool every day, it was kept spotless.",
            "The rooftop pool is stunning, especially at sunset.",
            "Loved the swimming pool area, lots of shade and towels provided.",
            "The pool was never too crowded, even in August.",
            "Great pool, big enough to actually swim laps.",
            "The heated pool was a treat on the cooler evenings.",
        ),
        (
            "The pool was tiny and always packed with people.",
            "People reserve the loungers around the pool at 7am with their towels, so there is never a free one.",
            "The pool water was cloudy and the tiles were slippery and green around the edges.",
            "The pool closes at 6pm which is way too early.",
            "Swimming pool was freezing cold, nobody actually went in.",
            "The pool was closed for maintenance for half our stay and nobody told us when we booked.",
        ),
        (
            "The pool is on the fifth floor.",
            "There is an outdoor pool and a small children's pool.",
        ),
        "Attractive outdoor pool with ample loungers and a relaxed atmosphere.",
        "Small, crowded pool with limited loungers.",
    ),
    _a(
        "parking",
        ("parking", "car park", "valet"),
        (
            "Parking was free and there was always a space.",
            "The valet was quick and friendly every time we needed the car.",
            "Easy parking right in front of the building, a big plus for a road trip.",
            "Secure underground car park at a reasonable daily rate.",
            "Parking was included in the rate which is unusual for this area.",
            "The car park was well lit and felt safe at night.",
        ),
        (
            "Parking is 40 dollars a night, on top of an already expensive room.",
            "The car park is tiny, we had to circle the block for twenty minutes.",
            "Valet took almost half an hour to bring the car back every morning.",
            "No parking on site, you have to use a public garage three streets away.",
            "Parking fees were not mentioned when we booked, nasty surprise at checkout.",
            "The car park entrance is so narrow that I scratched my rental car.",
        ),
        (
            "There is a car park under the building.",
            "We did not need parking because we came by train.",
        ),
        "Convenient on-site parking.",
        "Parking is limited and charged at a high daily fee.",
    ),
    _a(
        "room decor",
        ("room decor", "decor", "décor", "furnishings", "furniture", "carpet"),
        (
            "The room decor is modern and tasteful, very calming colours.",
            "Loved the decor, it feels like a boutique place rather than a chain.",
            "Rooms have been recently renovated and the furniture is all new.",
            "Stylish decor with lots of local art on the walls.",
            "The furnishings were comfortable and everything looked fresh.",
            "The room decor was really pretty, lots of natural wood and plants.",
        ),
        (
            "The room decor is very dated, it looks like nothing has changed since the nineties.",
            "Stained carpet and furniture that has seen better days.",
            "Decor is tired and old fashioned, the photos online must be twenty years old.",
            "The furniture was chipped and the wardrobe door kept falling off.",
            "Dated decor, brown everything, felt like staying at my grandmother's.",
            "The carpet in the hallway smelled musty and the furnishings were worn out.",
        ),
        (
            "The decor is classic, with heavy curtains and dark wood.",
            "Our room had a desk, a wardrobe and an armchair as furniture.",
        ),
        "Stylish, recently renovated room decor.",
        "Dated room decor that may not appeal to guests seeking modern aesthetics.",
    ),
    _a(
        "noise level",
        ("noise level", "noise", "noisy", "loud", "quiet", "soundproofing", "thin walls"),
        (
            "The room was very quiet despite being in the centre of town.",
            "Great soundproofing, we did not hear a thing from the street.",
            "Really quiet at night, we slept like babies.",
            "No noise at all from the neighbours or the corridor.",
            "Even with the windows open it was surprisingly quiet.",
            "The noise level was low even on a Saturday night, which we appreciated.",
        ),
        (
            "The room was so noisy, traffic all night and garbage trucks at 5am.",
            "Thin walls, we could hear every word of the couple next door.",
            "Loud music from the club across the street until 3 in the morning.",
            "Noise from the corridor and slamming doors kept waking us up.",
            "Bring earplugs, the noise level is unbearable if you face the street.",
            "The air vents made a loud rattling noise all night long.",
            "Very noisy rooms, the soundproofing is basically non existent.",
        ),
        (
            "Rooms at the back are supposed to get less street noise than the ones at the front.",
            "There was some construction noise during the day but it stopped in the evening.",
        ),
        "Quiet rooms with good soundproofing.",
        "Rooms can be noisy, with street noise and thin walls.",
    ),
    _a(
        "air conditioning",
        ("air conditioning", "air conditioner", "air con", "a/c", "ac"),
        (
            "The air conditioning worked perfectly, a lifesaver in the heat.",
            "AC was efficient and cooled the room down in minutes.",
            "Strong air con, easy to control, exactly what you need in July.",
            "The air conditioning kept the room nice and cool even at midday.",
            "Air conditioner was brand new and very efficient.",
            "Good A/C, we could set the exact temperature we wanted.",
        ),
        (
            "The air conditioning did not work and it was 35 degrees outside.",
            "AC was either off or arctic, there was no in between.",
            "The air con unit dripped water onto the floor all night.",
            "Air conditioning is centrally controlled so you cannot change the temperature yourself.",
            "The AC was so weak that the room never got below 27 degrees.",
            "Our air conditioner smelled mouldy every time it came on.",
        ),
        (
            "Every room has air conditioning and a ceiling fan.",
            "The AC switches off when you open the window.",
        ),
        "Effective air conditioning ensuring a comfortable indoor experience.",
        "Air conditioning is weak or unreliable in some rooms.",
    ),
    _a(
        "front desk staff",
        ("front desk staff", "front desk", "staff", "reception", "receptionist", "concierge"),
        (
            "The front desk staff were incredibly friendly and helpful from the moment we arrived.",
            "Staff went above and beyond, they even arranged a birthday cake for my wife.",
            "The receptionist gave us great tips for places to eat nearby, all spot on.",
            "Everyone at the front desk remembered our names after the first day.",
            "The concierge sorted out theatre tickets for us at the last minute.",
            "Lovely staff, always smiling and nothing was too much trouble.",
            "Special thanks to the reception team, they handled a problem with our booking really professionally.",
        ),
        (
            "The front desk staff were rude and clearly did not want to be there.",
            "Reception was unhelpful, when we reported a problem they just shrugged.",
            "Staff seemed overwhelmed and it took ages to get any answer.",
            "The receptionist was on her phone the entire time and barely looked at us.",
            "Nobody at the front desk spoke much English, which made things difficult.",
            "We were charged twice and the staff insisted it was our bank's fault.",
        ),
        (
            "The front desk is open 24 hours.",
            "Reception is on the first floor, not at street level.",
        ),
        "Friendly, helpful front desk staff.",
        "Front desk staff can be unhelpful and slow.",
    ),
    _a(
        "location",
        ("location", "located", "neighborhood", "neighbourhood"),
        (
            "The location is perfect, five minutes walk to the main square and the metro.",
            "Great location, close to everything but still on a calm side street.",
            "You cannot beat the location, we walked everywhere.",
            "Centrally located with lots of cafes and shops around.",
            "The neighbourhood is lovely and felt very safe walking back at night.",
            "Location, location, location, that is what you pay for here and it is worth it.",
            "Perfectly located for the old town and the harbour.",
        ),
        (
            "The location is a bit out of the way, you need a taxi to get anywhere.",
            "The neighborhood felt sketchy after dark, I would not walk around alone.",
            "It is located next to a motorway junction, not exactly charming.",
            "Location is not as central as the website claims, it is a 30 minute walk.",
            "Nothing around the location except an industrial estate and a petrol station.",
            "The neighbourhood is dead in the evening, nothing open nearby.",
        ),
        (
            "The hotel is located about 20 minutes from the airport.",
            "The location is near the train station.",
        ),
        "Central location within walking distance of major attractions.",
        "Location is remote from the main attractions.",
    ),
    _a(
        "bed comfort",
        ("bed comfort", "bed", "mattress", "pillow"),
        (
            "The bed was incredibly comfortable, best sleep I have had in months.",
            "Super comfy beds with a choice of pillows.",
            "The mattress was firm but really comfortable, and the linen was crisp.",
            "Beds are huge and so comfortable I did not want to get up.",
            "Lovely soft pillows and a great mattress.",
            "The bed was like sleeping on a cloud.",
        ),
        (
            "The bed was rock hard and I woke up with a sore back every morning.",
            "Saggy old mattress, you could feel every spring.",
            "The pillows were flat and lumpy, had to fold two together.",
            "Two single beds pushed together instead of the double we booked.",
            "The bed creaked every time one of us moved.",
            "The mattress was so soft that we rolled into the middle all night.",
        ),
        (
            "We had a king bed and a sofa.",
            "Extra pillows are available on request.",
        ),
        "Comfortable beds with quality mattresses and linens.",
        "Beds and mattresses are uncomfortable and worn.",
    ),
    _a(
        "bathroom",
        ("bathroom", "shower", "toilet"),
        (
            "The bathroom was spotless and the shower had great pressure.",
            "Huge bathroom with a rain shower and a separate tub.",
            "Lovely bathroom with nice toiletries that smelled amazing.",
            "Shower was hot and powerful, just what I needed after a long flight.",
            "The bathroom had been renovated recently and looked great.",
            "Heated floor in the bathroom, such a nice touch.",
        ),
        (
            "The bathroom was tiny, you could barely turn around.",
            "Shower pressure was a joke and the water went cold after five minutes.",
            "Mould in the bathroom grout and a hair in the sink when we arrived.",
            "The toilet kept running all night and nobody came to fix it.",
            "The shower door did not close so the whole bathroom floor flooded.",
            "The bathroom smelled of drains the whole time.",
        ),
        (
            "The bathroom has a bathtub with a shower.",
            "Toiletries are provided in the bathroom.",
        ),
        "Clean, modern bathrooms with strong showers.",
        "Bathrooms are small and showers have weak water pressure.",
    ),
    _a(
        "gym",
        ("gym", "fitness center", "fitness centre", "treadmill"),
        (
            "The gym is well equipped and open 24 hours.",
            "Good fitness centre with new machines and free weights.",
            "I used the gym every morning, it was never crowded.",
            "Nice little gym with windows over the park.",
            "The fitness center was clean and had water and towels ready.",
            "Surprisingly good gym for a hotel this size.",
        ),
        (
            "The gym is just two old treadmills in a basement room.",
            "Fitness center was closed during our entire stay.",
            "The gym equipment was broken and nobody seemed to care.",
            "Tiny gym with no air circulation, it was like a sauna in there.",
            "Gym only opens at 8am, useless if you want to work out before a meeting.",
            "Don't expect much from the gym, a couple of dumbbells and a bike.",
        ),
        (
            "There is a small gym on the lower ground floor.",
            "I did not use the gym.",
        ),
        "Well-equipped gym open around the clock.",
        "Small gym with limited, outdated equipment.",
    ),
    _a(
        "restaurant",
        ("restaurant", "dinner", "a la carte"),
        (
            "The restaurant was excellent, we ate there three nights in a row.",
            "Dinner at the hotel restaurant was the highlight of the trip, the fish was superb.",
            "Great restaurant with a creative menu and friendly waiters.",
            "We had a lovely dinner at the restaurant, outside under the trees.",
            "The a la carte menu was varied and everything we tried was delicious.",
            "Honestly the restaurant could compete with the best places in town.",
        ),
        (
            "The restaurant is overpriced and the food was mediocre at best.",
            "Dinner took two hours to arrive and was lukewarm.",
            "Paid 60 euros for a dinner that would be half that in town.",
            "The restaurant menu is tiny and never changes.",
            "We ate at the restaurant once and that was enough, bland and expensive.",
            "Restaurant waiters forgot our order twice in one evening.",
            "The a la carte restaurant was fully booked every night we tried.",
        ),
        (
            "The restaurant opens for dinner at 7pm.",
            "We did not try the restaurant.",
        ),
        "On-site restaurant serving well-prepared dishes.",
        "Restaurant is overpriced for mediocre food.",
    ),
    _a(
        "price",
        ("price", "pricing", "value", "cost"),
        (
            "Great value for the money, especially for such a central spot.",
            "The price was very reasonable compared to other places in the area.",
            "Excellent value, we paid less than at a chain motel and got much more.",
            "For the price you really cannot complain.",
            "Very good price for what you get, I would pay more honestly.",
            "Booked directly and got a great price with a free upgrade.",
        ),
        (
            "Way too expensive for what you get, poor value.",
            "The price doubled at the weekend for exactly the same room.",
            "Not worth the price, there are much better options in town for less.",
            "Hidden costs everywhere, resort fee, city tax, even a charge for the safe.",
            "For that price I expected a lot more.",
            "The cost of everything once you are there adds up fast.",
        ),
        (
            "The price was around 150 a night including taxes.",
            "The price included a daily credit for drinks.",
        ),
        "Good value for money.",
        "Expensive for the level of quality offered.",
    ),
    _a(
        "view",
        ("view",),
        (
            "The view from our room was breathtaking, we could see the whole bay.",
            "Ask for a high floor, the view is amazing.",
            "Stunning sea views from the room.",
            "Woke up every morning to a beautiful view of the mountains.",
            "The view of the skyline at night is worth the extra money.",
            "Our room had a lovely view over the gardens.",
        ),
        (
            "The view was of a brick wall and the bins.",
            "We paid for a sea view and got a view of the bins and a wall.",
            "No view at all, the window faced an air shaft.",
            "The view was blocked by scaffolding the whole time.",
            "The so-called city view was mostly of the building next door.",
            "Don't pay extra for the view, it is not worth it.",
        ),
        (
            "Our room faced the street, so the view was of the shops opposite.",
            "Rooms on the other side have a view of the courtyard.",
        ),
        "Rooms offer beautiful views.",
        "Many rooms have poor views.",
    ),
    _a(
        "elevators",
        ("elevators", "elevator", "lift"),
        (
            "The elevators were fast, we never waited more than a minute.",
            "Plenty of lifts so no queues even at checkout time.",
            "Modern elevators, smooth and spotless.",
            "The lift goes right down to the garage which is handy with luggage.",
            "Glass elevator with a great outlook on the atrium, the kids loved it.",
            "Never had to wait for an elevator, even on a busy weekend.",
        ),
        (
            "Only two elevators for twelve floors, we waited ages every time.",
            "The lift was out of order for three days and we were on the 9th floor.",
            "The elevators are old and shake alarmingly.",
            "Long queues for the lifts every morning around nine.",
            "The elevator got stuck with us inside for ten minutes.",
            "Tiny lift that fits two people and one suitcase at most.",
        ),
        (
            "There is a lift to all floors.",
            "The elevators are to the left of the entrance.",
        ),
        "Efficient elevators with short waits.",
        "Elevators are slow and often crowded.",
    ),
    _a(
        "housekeeping",
        ("housekeeping", "housekeeper", "maid", "turndown"),
        (
            "Housekeeping did an excellent job, the room was spotless every day.",
            "Our housekeeper was lovely and left little towel animals for the kids.",
            "Turndown service every evening with chocolates, very nice.",
            "Housekeeping was discreet and always came while we were out.",
            "The maid service was thorough, fresh towels every day without asking.",
            "Big compliments to housekeeping, everything was immaculate.",
        ),
        (
            "Housekeeping skipped our room two days in a row.",
            "The maid knocked at 8am every morning even with the do not disturb sign on.",
            "Housekeeping never replaced the towels unless we called three times.",
            "Our room was not cleaned properly, housekeeping just emptied the bins and left.",
            "Housekeeping moved our things around and threw away a bag with my medication.",
            "Turndown service was advertised but we never saw it.",
        ),
        (
            "Housekeeping comes every other day unless you ask for daily service.",
            "You can opt out of housekeeping to support their green programme.",
        ),
        "Attentive housekeeping keeps rooms spotless.",
        "Housekeeping is inconsistent.",
    ),
    _a(
        "spa",
        ("spa", "massage"),
        (
            "The spa was heavenly, I had the best massage of my life.",
            "Beautiful spa with a sauna, steam room and a relaxation area.",
            "Booked a couples massage at the spa and it was worth every penny.",
            "Spa treatments were reasonably priced and very professional.",
            "The spa is an oasis of calm, I could have stayed there all day.",
            "Great massage therapists, my back has never felt better.",
        ),
        (
            "The spa was fully booked for our whole stay.",
            "Spa treatments are crazy expensive, 150 for a 50 minute massage.",
            "The spa is small and the sauna was broken.",
            "My massage was rushed and the therapist chatted the whole time.",
            "The spa area felt run down and the changing rooms were dirty.",
            "They charge an entrance fee for the spa even for hotel guests.",
        ),
        (
            "The spa is on the ground floor.",
            "You need to book the spa at least a day ahead.",
        ),
        "Relaxing spa with professional treatments.",
        "Spa is expensive and hard to book.",
    ),
    _a(
        "bar",
        ("bar", "bartender", "cocktail"),
        (
            "The bar makes fantastic cocktails and the bartender was a real character.",
            "Lovely rooftop bar, perfect for a drink at sunset.",
            "Happy hour at the bar was a bargain.",
            "The bar had a great atmosphere in the evenings with live music.",
            "Best cocktail I had on the whole holiday, thanks to the bartender.",
            "Cosy bar with a good selection of local wines and beers.",
        ),
        (
            "The bar closes at 11pm, which is ridiculously early.",
            "Drinks at the bar were very expensive and the cocktails were weak.",
            "The bartender was rude and ignored us for fifteen minutes.",
            "The bar has no atmosphere at all, empty every night.",
            "Cocktails tasted like they were made from a mix.",
            "The bar area was sticky and smelled of stale beer.",
        ),
        (
            "The bar is next to the entrance.",
            "The bar serves snacks until late.",
        ),
        "Lively bar with well-made cocktails.",
        "Bar is expensive and closes early.",
    ),
    _a(
        "check-in",
        ("check-in", "check in", "checkin", "checked in"),
        (
            "Check-in was quick and easy, we were in our room within five minutes.",
            "They let us check in early at no extra charge, which was a lifesaver after a night flight.",
            "Smooth check-in with a welcome drink while we waited.",
            "The online check-in worked perfectly, we just picked up the keys.",
            "We checked in at midnight and it was quick and friendly.",
            "Fastest check-in I have ever had.",
        ),
        (
            "Check-in took over an hour, there was one person working and a huge queue.",
            "Our room was not ready until 5pm even though check-in is at 2.",
            "Slow check-in and they had lost our reservation.",
            "We waited 40 minutes to check in, with tired kids, after a long flight.",
            "The check-in process was chaotic, nobody knew what was going on.",
            "Check-in is at 4pm and they would not budge even though the room was ready.",
        ),
        (
            "Check-in is from 3pm and checkout by 11am.",
            "We checked in around 6pm.",
        ),
        "Quick, efficient check-in.",
        "Check-in can be slow, with long queues.",
    ),
    _a(
        "beach",
        ("beach", "sand"),
        (
            "The beach is right in front of the resort, soft white sand and calm water.",
            "Beautiful beach with plenty of loungers and umbrellas included.",
            "The beach was cleaned every morning and never felt crowded.",
            "Direct beach access is the biggest plus, we were in the sea within two minutes.",
            "Gorgeous sandy beach, perfect for the kids.",
            "The private beach area was peaceful and well maintained.",
        ),
        (
            "The beach was covered in seaweed and rubbish.",
            "The beach is tiny and every lounger was taken by 8am.",
            "Rocky beach, you need water shoes to get in the sea.",
            "The beach is a 15 minute walk away, not beachfront at all.",
            "Hawkers on the beach would not leave us alone.",
            "The sand was full of cigarette butts.",
        ),
        (
            "The beach is across the road from the main building.",
            "Beach towels are handed out at the hut.",
        ),
        "Beautiful beach right on the doorstep.",
        "Beach is small, crowded or poorly maintained.",
    ),
    _a(
        "room size",
        ("room size", "spacious", "cramped", "roomy"),
        (
            "Our room was very spacious, plenty of space for two suitcases and a sofa.",
            "The room size was generous for a city centre hotel.",
            "Really roomy suite, great for a family of four.",
            "Spacious room with a separate seating area.",
            "Room size was much bigger than we expected from the photos.",
            "Lovely spacious room, we never felt on top of each other.",
        ),
        (
            "The room was cramped, we had to climb over the suitcases to reach the window.",
            "Room size is tiny, more like a cabin on a ship.",
            "Very cramped for two people, there was nowhere to put anything.",
            "The room size was about half of what the photos suggested.",
            "The so-called superior room was cramped and had no wardrobe.",
            "Not spacious at all, we kept bumping into each other.",
        ),
        (
            "The room size is around 20 square metres.",
            "Standard rooms are spacious enough for two.",
        ),
        "Spacious rooms.",
        "Rooms are cramped.",
    ),
    _a(
        "room service",
        ("room service",),
        (
            "Room service was fast and the food arrived hot.",
            "We ordered room service late at night and it was excellent.",
            "Room service in the morning was a real treat.",
            "Great room service menu, available 24 hours.",
            "Room service was quick and the portions were generous.",
            "Ordered room service twice, both times spot on.",
        ),
        (
            "Room service took over an hour and got the order wrong.",
            "Room service is ridiculously expensive, 20 dollars for a sandwich.",
            "Room service stops at 10pm, which is not helpful after a late flight.",
            "The room service food arrived cold and soggy.",
            "Nobody answered the phone for room service.",
            "Room service forgot half of our order.",
        ),
        (
            "Room service is available until midnight.",
            "We did not use room service.",
        ),
        "Efficient room service with a good menu.",
        "Room service is slow and expensive.",
    ),
    _a(
        "coffee maker",
        ("coffee maker", "coffeemaker", "coffee machine", "kettle", "nespresso"),
        (
            "Loved having a Nespresso machine in the room.",
            "The coffee maker in the room was a great touch for early mornings.",
            "There was a kettle with a good selection of teas, very welcome.",
            "In-room coffee machine with plenty of pods, refilled daily.",
            "Having a coffee maker in the room saved us a lot of money.",
            "The kettle and the fresh milk were much appreciated.",
        ),
        (
            "No kettle in the room, had to go downstairs for hot water.",
            "The coffee maker was broken and never got replaced.",
            "The coffee machine pods were not refilled once.",
            "The kettle was filthy inside, I would not use it.",
            "Coffee maker in the room but no coffee, they charge extra for the pods.",
            "The coffeemaker made the worst coffee I have ever had.",
        ),
        (
            "Each room has a kettle and tea bags.",
            "There is a coffee maker on the desk.",
        ),
        "In-room coffee makers provided.",
        "In-room coffee makers are missing or poorly supplied.",
    ),
    _a(
        "minibar",
        ("minibar", "fridge", "mini-fridge"),
        (
            "The minibar was well stocked and reasonably priced.",
            "A complimentary minibar with soft drinks and snacks, refilled every day.",
            "Great to have a real fridge in the room to keep our own drinks cold.",
            "The minibar was free, which was a lovely surprise.",
            "Handy mini-fridge, useful for the baby's milk.",
            "The fridge was empty so we could use it for our own things, perfect.",
        ),
        (
            "The minibar is insane, 8 euros for a small water.",
            "The fridge did not work, everything was warm.",
            "The minibar is motion sensitive and charged us for moving a bottle.",
            "There was no fridge in the room, not even a small one.",
            "The minibar was humming loudly all night.",
            "They charged us for minibar items we never touched.",
        ),
        (
            "The minibar is in the cupboard under the desk.",
            "Every room has a small fridge.",
        ),
        "Complimentary minibar.",
        "Minibar is overpriced.",
    ),
    _a(
        "laundry service",
        ("laundry service", "laundry", "dry cleaning"),
        (
            "The laundry service was fast, our clothes were back the same evening.",
            "Laundry was reasonably priced and everything came back perfectly folded.",
            "Great dry cleaning service, my suit was ready in a few hours.",
            "There is a self-service laundry room, very useful for a long stay.",
            "Laundry service saved us on a two-week trip.",
            "Same day laundry and dry cleaning, very convenient for business travellers.",
        ),
        (
            "The laundry service lost one of my shirts.",
            "Laundry is outrageously expensive, 10 euros for a t-shirt.",
            "Dry cleaning took three days and came back with a stain.",
            "No laundry facilities at all, not great for a long stay.",
            "The laundry service shrank my favourite jumper.",
            "Laundry service was closed on weekends.",
        ),
        (
            "Laundry bags are in the wardrobe.",
            "The laundry service collects clothes before 9am.",
        ),
        "Valet dry cleaning and laundry services available for guest convenience.",
        "Laundry service is expensive and slow.",
    ),
    _a(
        "balcony",
        ("balcony", "terrace"),
        (
            "Our balcony was big enough for two chairs and a table, lovely for evening drinks.",
            "The private terrace was the best part of the room.",
            "Loved sitting on the balcony with a coffee in the morning.",
            "Every room has a balcony, which makes a big difference.",
            "The terrace got the sun all afternoon, perfect.",
            "A balcony with a hammock, I did not want to leave.",
        ),
        (
            "The balcony was tiny and faced straight into another building.",
            "The balcony door would not lock, which made us nervous.",
            "Balcony was filthy, covered in pigeon droppings.",
            "We booked a room with a terrace and got one without.",
            "The balcony was shared with the next room, no privacy at all.",
            "Could not use the balcony because of the smoke from the kitchen vents.",
        ),
        (
            "Our room had a small balcony.",
            "Terrace rooms are on the second floor.",
        ),
        "Rooms have private balconies.",
        "Balconies are small or lack privacy.",
    ),
    _a(
        "kids club",
        ("kids club", "kids' club", "children's club"),
        (
            "The kids club was fantastic, our children begged to go every day.",
            "Great kids club with lots of crafts, games and outdoor activities.",
            "Our son loved the kids club, they had a pirate day and a treasure hunt.",
            "The kids club gave us a few hours of peace each day, worth every minute.",
            "Well organised children's club with activities for different ages.",
            "The kids club team were brilliant with our shy daughter.",
        ),
        (
            "The kids club was just an empty room with a few toys, very disappointing.",
            "Kids club only takes children over four, so useless for us.",
            "The kids club closed at lunchtime, which made it pointless.",
            "The kids club was understaffed and chaotic.",
            "They charge extra for the kids club, which was not mentioned anywhere.",
            "Kids club activities were the same every single day.",
        ),
        (
            "The kids club is for children aged 4 to 12.",
            "The kids club is next to the garden.",
        ),
        "Well-run kids club with daily activities.",
        "Kids club is limited.",
    ),
    _a(
        "tv",
        ("tv", "television"),
        (
            "Huge flat screen TV with Netflix, which the kids loved.",
            "The TV had plenty of channels in English.",
            "Great smart TV, we could cast from our phones.",
            "Nice big television facing the couch.",
            "The TV worked well and had a good selection of movies.",
            "Loved being able to log into my own streaming account on the TV.",
        ),
        (
            "The TV was tiny and only had local channels.",
            "The television did not work and nobody came to fix it.",
            "TV remote was missing batteries and the picture kept freezing.",
            "Ancient TV with a fuzzy picture.",
            "The TV was mounted so high that you could only watch it lying down.",
            "No English channels on the TV at all.",
        ),
        (
            "There is a TV on the wall opposite the desk.",
            "The TV has a few international channels.",
        ),
        "Large flat-screen TVs with streaming.",
        "Small TVs with few channels.",
    ),
    _a(
        "lobby",
        ("lobby",),
        (
            "The lobby is gorgeous, lots of plants and comfy sofas.",
            "Beautiful lobby with a fireplace, great place to relax in the evening.",
            "The lobby always smelled amazing.",
            "Stunning lobby, the first impression is wonderful.",
            "Lovely lobby with free coffee and fruit all day.",
            "The lobby was a nice place to work with my laptop.",
        ),
        (
            "The lobby is dark and gloomy.",
            "The lobby was always crowded with tour groups.",
            "The lobby smelled of cigarette smoke.",
            "Tiny lobby with nowhere to sit while waiting.",
            "The lobby is under renovation and covered in plastic sheets.",
            "The lobby looked nothing like the photos.",
        ),
        (
            "The lobby is on the ground floor.",
            "There is a small shop in the lobby.",
        ),
        "Welcoming, stylish lobby.",
        "Lobby is small and uninviting.",
    ),
)

#: Every aspect of the bank, keyed by its query-like name.
ASPECTS: dict[str, AspectPhrases] = {item.name: item for item in _ASPECT_LIST}

#: Values for the ``{slot}`` placeholders in narrative sentences.
SLOTS: dict[str, tuple[str, ...]] = {
    "nights": ("two", "three", "four", "five", "six", "seven", "ten", "two weeks", "a couple of"),
    "month": (
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ),
    "companion": (
        "my wife",
        "my husband",
        "my partner",
        "my girlfriend",
        "my boyfriend",
        "two friends",
        "my parents",
        "our two kids",
        "a colleague",
        "my sister",
        "the whole family",
    ),
    "purpose": (
        "a conference",
        "our anniversary",
        "a wedding",
        "a city break",
        "a birthday weekend",
        "work",
        "a family holiday",
        "a concert",
        "our honeymoon",
        "a stopover",
    ),
}

#: How a review starts: arrival, trip purpose, who came along.
OPENERS: tuple[str, ...] = (
    "We stayed here for {nights} nights in {month} for {purpose}.",
    "Stayed {nights} nights with {companion} for {purpose}.",
    "I travelled here with {companion} in {month}.",
    "Just got back from {nights} nights here.",
    "This was our second time here, we came back for {purpose}.",
    "Booked this place last minute for {purpose} and did not know what to expect.",
    "We arrived late in the evening after a long drive.",
    "I stay here regularly for work, maybe four or five times a year.",
    "We chose this hotel based on the reviews here, so I thought I should write one too.",
    "Came here with {companion} for {purpose} in {month}.",
    "First time in the city and we picked this hotel for {purpose}.",
    "Our flight was delayed so we got here around 2 in the morning.",
    "My company booked this for me during a week of meetings.",
    "We spent {nights} nights here at the end of a road trip.",
    "After reading mixed reviews I was a bit nervous before we arrived.",
    "We booked through a travel agent as part of a package.",
    "I have been meaning to write this review since we got home in {month}.",
    "Where to start.",
    "Long review, sorry, but I think it might help someone.",
    "We were a group of six adults celebrating {purpose}.",
)

#: General narrative sentences that mention no aspect.
FILLER: tuple[str, ...] = (
    "We spent most of our days exploring so we were only really in the room to sleep.",
    "The taxi from the airport took about twenty minutes.",
    "It rained for half of the trip but we still had a good time.",
    "We were upgraded to a slightly larger room on arrival, which was nice.",
    "Our room was on the fourth floor at the end of the corridor.",
    "The photos on the website are fairly accurate.",
    "There is a supermarket around the corner for snacks and water.",
    "Checkout was straightforward and they called us a taxi.",
    "We left our luggage with them on the last day while we went sightseeing.",
    "The building itself is quite old but full of character.",
    "We mostly ate out, there are plenty of options within walking distance.",
    "The weather was great the whole week.",
    "My partner had a cold for two days so we spent more time in the room than planned.",
    "We were celebrating and they left a card in the room.",
    "Keep in mind it is a big place, so there is a bit of walking from the entrance to the rooms.",
    "There is a pharmacy and a cash machine just across the road.",
    "I booked the cheapest room type and it was fine for our needs.",
    "We had a small issue with the key card but it was sorted quickly.",
    "The main sights are easy to reach by bus.",
    "I would suggest asking for a room on a higher floor.",
    "Bring comfortable shoes, the streets around here are steep.",
    "The safe in the room was big enough for a laptop.",
    "We had a connecting room for the kids, which worked well.",
    "The hallways are long and a bit of a maze at first.",
    "It is a popular place with tour groups, so expect coaches in the morning.",
    "Our trip was mainly about visiting family so the hotel was just a base.",
    "The windows actually open, which I always appreciate.",
    "We got a late checkout without any fuss.",
    "There was a welcome letter with useful information about the area.",
    "I travel a lot for work and this was about average for the category.",
    "The hotel was busy because of a big event in town that week.",
    "Our friends stayed at a different place nearby and were jealous.",
    "Note that they take a deposit on your card at arrival.",
    "The corridors were decorated for the holidays, which was sweet.",
    "You can store bikes in a locked room downstairs.",
)

#: Narrative sentences in the voice of a non-native English speaker.
NON_NATIVE_FILLER: tuple[str, ...] = (
    "We was very happy for this stay.",
    "Hotel is near of everything we need.",
    "Me and my wife come here for holiday of one week.",
    "Room was good size for two person.",
    "I recommend for who want to visit the city.",
    "All is ok, only small problems.",
    "We will come back again for sure next year.",
    "Very good hotel, I am satisfy.",
    "The people is very kind with us.",
    "Is a good choice for the family with childrens.",
)

#: Closing sentences by overall tone.
CLOSERS_POSITIVE: tuple[str, ...] = (
    "Would definitely stay here again.",
    "Highly recommend, we are already planning our next visit.",
    "Overall a fantastic stay, thank you!",
    "Can't wait to come back.",
    "Five stars from us, no hesitation.",
    "If you are on the fence, just book it.",
    "One of the best hotels we have stayed in.",
    "Thanks for a great stay, see you next year.",
    "We will be back for sure.",
    "Highly recommended for couples and families alike.",
)
CLOSERS_NEGATIVE: tuple[str, ...] = (
    "Would not stay here again.",
    "Avoid, there are much better options in the area.",
    "Never again.",
    "Very disappointing overall.",
    "I would not recommend this place to anyone.",
    "Save your money and book somewhere else.",
    "We checked out a day early.",
    "Management really needs to sort this place out.",
    "Not what we expected at all from the reviews.",
    "Such a shame, it could be a good hotel.",
)
CLOSERS_MIXED: tuple[str, ...] = (
    "Overall it was ok, but not great.",
    "Good in parts, but there is room for improvement.",
    "Decent enough for a night or two.",
    "Would maybe stay again if the rate was right.",
    "Mixed feelings, to be honest.",
    "Fine for what it is.",
    "Some things were great, some not so much.",
    "Not bad, not amazing.",
)

#: Whole reviews of one line.
ONE_LINERS_POSITIVE: tuple[str, ...] = (
    "Loved it!!",
    "Perfect stay, thank you.",
    "Great hotel, would go back.",
    "Excellent in every way.",
    "No complaints at all.",
    "Everything was just right.",
)
ONE_LINERS_NEGATIVE: tuple[str, ...] = (
    "Terrible. Avoid.",
    "Worst hotel ever.",
    "Not worth it.",
    "Would not go back.",
    "Awful stay.",
    "Disappointing.",
)

#: Lead-ins that make a template read less like a template.
PREFIXES_POSITIVE: tuple[str, ...] = (
    "On the plus side, ",
    "I have to say ",
    "Also, ",
    "Special mention: ",
    "What we loved most: ",
    "Big thumbs up: ",
    "The big plus for us: ",
    "Honestly, ",
)
PREFIXES_NEGATIVE: tuple[str, ...] = (
    "Unfortunately ",
    "The only real downside: ",
    "One complaint, ",
    "Sadly, ",
    "What let it down: ",
    "My biggest gripe: ",
    "Be warned, ",
    "On the negative side, ",
)
PREFIXES_ANY: tuple[str, ...] = ("FYI ", "Just so you know, ", "Worth mentioning: ", "Btw ")

EMOJI_POSITIVE: tuple[str, ...] = ("😀", "😍", "👍", "🙂", "🌞", "❤️", "🏖️", "👌")
EMOJI_NEGATIVE: tuple[str, ...] = ("😡", "👎", "😞", "🙄", "😤", "🤢")

#: Common misspellings, applied to some reviews (never to aspect terms).
MISSPELLINGS: dict[str, str] = {
    "definitely": "definately",
    "recommend": "reccomend",
    "really": "realy",
    "because": "becuase",
    "which": "wich",
    "their": "thier",
    "comfortable": "confortable",
    "beautiful": "beatiful",
    "separate": "seperate",
    "arrived": "arived",
    "wonderful": "wonderfull",
    "friendly": "freindly",
    "until": "untill",
    "experience": "experiance",
}

#: Rare, serious complaints (what a critical-complaint guard should flag).
CRITICAL_COMPLAINTS: dict[str, tuple[str, ...]] = {
    "bed bugs": (
        "On the second night I woke up covered in itchy red bites and found bed bugs in the seams of the mattress.",
        "We found bed bugs crawling on the headboard, I have photos.",
    ),
    "theft": (
        "Someone entered our room while we were out and my wallet and an iPad were stolen from the room.",
        "Cash disappeared from the locked suitcase in our room and the manager just said they are not responsible.",
    ),
    "food poisoning": (
        "Both of us got food poisoning after eating the seafood and spent two days being sick.",
    ),
    "safety": (
        "The fire exit on our floor was chained shut, which is genuinely dangerous.",
    ),
    "hygiene": (
        "There were cockroaches in the bathroom and droppings in the wardrobe.",
    ),
}


def aspect(name: str) -> AspectPhrases:
    """Look up an aspect of the bank by name.

    Args:
        name: The aspect name, e.g. ``"pool"``.

    Returns:
        The aspect's phrases.

    Raises:
        ConfigError: When the bank has no such aspect.

    Example:
        >>> aspect("pool").terms[0]
        'pool'
    """
    try:
        return ASPECTS[name]
    except KeyError:
        known = ", ".join(sorted(ASPECTS))
        raise ConfigError(f"unknown aspect {name!r}; choose one of: {known}") from None


def _term_regex(term: str) -> str:
    parts = re.split(r"[\s\-]+", term)
    body = r"[\s\-]?".join(re.escape(part) for part in parts)
    return rf"(?<![\w\-']){body}(?:s|es)?(?![\w\-])"


@cache
def mention_pattern(name: str) -> re.Pattern[str]:
    """A case-insensitive pattern that matches any term of an aspect.

    Terms match as whole words, with an optional plural ``s``/``es`` and with
    spaces and hyphens interchangeable (``wi-fi``, ``wi fi``, ``wifi``).

    Args:
        name: An aspect name of the bank.

    Returns:
        The compiled pattern.

    Example:
        >>> bool(mention_pattern("elevators").search("The lift was broken."))
        True
    """
    terms = aspect(name).terms
    return re.compile("|".join(_term_regex(term) for term in terms), re.IGNORECASE)


def mentions(name: str, text: str) -> bool:
    """Whether ``text`` mentions the aspect ``name`` (by any of its terms).

    Example:
        >>> mentions("pool", "The swimming pool was cold.")
        True
        >>> mentions("bar", "The minibar was empty.")
        False
    """
    return mention_pattern(name).search(text) is not None
